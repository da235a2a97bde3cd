import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp, type App } from '../src/app.js';
import { createEnv, DIALECTS, openSecondHandle, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, get } from './support/http.js';
import { Receiver, until } from './support/receiver.js';

/*
 * Writes that arrive together commit together (one transaction, one COMMIT), yet each keeps its
 * own answer: these tests send bursts of concurrent writes and check what each client is told,
 * what the database holds afterwards (read again through a connection of its own), and that the
 * feed, the webhooks and the group-size metric see every write.
 */

const TEST_CONFIG = {
  PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32',
  PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
  PRODGRAPH_WEBHOOK_RETRY_MAX_MS: '400',
};

/** Text of a note that the commit guard (installed by one test) refuses, but only at COMMIT. */
const REFUSED_AT_COMMIT = 'refused at commit';

for (const dialect of DIALECTS) {
  describe(`group commit of concurrent writes [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let admin: string;
    let coat: number;
    const groups: number[] = [];

    const note = (body: Record<string, unknown>, key?: string, asset = coat) =>
      call(env.app, 'POST', `/api/v1/assets/${asset}/notes`, {
        token,
        body,
        headers: key ? { 'idempotency-key': key } : {},
      });
    const notesWith = async (prefix: string) => {
      const other = await openSecondHandle(env);
      try {
        return (
          await other.db
            .selectFrom('version_notes')
            .where('text', 'like', `${prefix}%`)
            .select('text')
            .execute()
        )
          .map((r) => r.text)
          .sort();
      } finally {
        await other.close();
      }
    };
    const coatUpdatedAt = async () =>
      (
        await env.handle.db
          .selectFrom('nodes')
          .where('id', '=', coat)
          .select('updated_at')
          .executeTakeFirstOrThrow()
      ).updated_at;

    before(async () => {
      env = await createEnv(dialect, TEST_CONFIG);
      // one asset with a version for the notes to land on
      const make = new Factory(env.handle.db);
      const film = (await make.production({ code: 'film' })).id;
      coat = (await make.asset(film, { ref: 'co-coat', kind: 'costume', label: 'Mara coat' })).id;
      await make.version(film, coat);
      token = await env.mint({ production: 'film', label: 'pipeline' });
      admin = await env.mint({ production: 'film', scopes: ['admin'] });
      env.handle.observe({ committed: (size) => groups.push(size) });
    });
    after(() => env.close());

    it('one refused write of a group leaves nothing and gets its own refusal; the others land', async () => {
      const stampBefore = await coatUpdatedAt();
      groups.length = 0;
      const answers = await Promise.all([
        note({ text: 'burst-a 1' }, 'burst-a-1'),
        note({ text: 'burst-a 2' }, 'burst-a-2'),
        // stamps the asset first, then is refused: its savepoint takes the stamp back
        note({ text: 'burst-a refused', version_id: 987654 }, 'burst-a-3'),
        note({ text: 'burst-a 4' }),
        note({ text: 'burst-a missing' }, 'burst-a-5', 987654),
        note({ text: 'burst-a 6' }, 'burst-a-6'),
      ]);
      assert.deepEqual(
        answers.map((a) => a.status),
        [201, 201, 422, 201, 404, 201],
      );
      assert.match(answers[2].body.detail, /is not a version of asset/);
      assert.deepEqual(await notesWith('burst-a'), ['burst-a 1', 'burst-a 2', 'burst-a 4', 'burst-a 6']);
      // on PostgreSQL the group ran again after the refusals: still one activity entry per note
      const entries = await env.handle.db
        .selectFrom('activity')
        .where('summary', 'like', '%burst-a%')
        .select('summary')
        .execute();
      assert.deepEqual(entries.map((e) => e.summary.replace(/^.*: /, '')).sort(), [
        'burst-a 1',
        'burst-a 2',
        'burst-a 4',
        'burst-a 6',
      ]);
      assert.ok(
        groups.some((size) => size > 1),
        `writes sent together commit together (groups ${groups})`,
      );
      assert.equal(
        groups.reduce((a, b) => a + b, 0),
        4,
        'the group sizes count the committed writes only',
      );
      // the refused write's stamp was rolled back, the others' stamps landed after it
      assert.notEqual(await coatUpdatedAt(), stampBefore);
      // a refused keyed request is not remembered: retried with its key, it is judged afresh
      const retried = await note({ text: 'burst-a retried' }, 'burst-a-3');
      assert.equal(retried.status, 201);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
    });

    it('idempotent replays inside a group answer the original; a twin in the same group replays it', async () => {
      const first = await note({ text: 'burst-b first' }, 'burst-b-1');
      assert.equal(first.status, 201);
      groups.length = 0;
      const answers = await Promise.all([
        note({ text: 'burst-b first' }, 'burst-b-1'),
        note({ text: 'burst-b twin' }, 'burst-b-2'),
        note({ text: 'burst-b twin' }, 'burst-b-2'),
        note({ text: 'burst-b other body' }, 'burst-b-1'),
        note({ text: 'burst-b plain' }),
      ]);
      assert.deepEqual(
        answers.map((a) => a.status),
        [201, 201, 201, 422, 201],
      );
      assert.equal(answers[0].headers['idempotent-replayed'], 'true');
      assert.deepEqual(answers[0].body, first.body);
      const twins = [answers[1], answers[2]];
      assert.deepEqual(twins[0]!.body, twins[1]!.body, 'one twin replays the other');
      assert.deepEqual(twins.map((t) => t.headers['idempotent-replayed'] ?? 'no').sort(), ['no', 'true']);
      assert.equal(answers[3].body.code, 'idempotency_key_reused');
      assert.deepEqual(await notesWith('burst-b'), ['burst-b first', 'burst-b plain', 'burst-b twin']);
    });

    it('every acknowledged write is in the database as read by another connection', async () => {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => note({ text: `burst-c ${i}` }, `burst-c-${i}`)),
      );
      assert.ok(answers.every((a) => a.status === 201));
      const ids = answers.map((a) => a.body.id as number);
      const other = await openSecondHandle(env);
      try {
        const rows = await other.db.selectFrom('version_notes').where('id', 'in', ids).select('id').execute();
        assert.equal(rows.length, 40);
        const keys = await other.db
          .selectFrom('idempotency_keys')
          .where('key', 'like', 'burst-c-%')
          .where('status_code', '=', 201)
          .select('id')
          .execute();
        assert.equal(keys.length, 40, 'each write recorded its key in its own savepoint');
      } finally {
        await other.close();
      }
    });

    it('the change feed and a webhook see every write of a group, after its commit', async () => {
      const head = (await get(env.app, '/api/v1/changes?after=now', token)).body.next_cursor as string;
      const receiver = await new Receiver().start();
      const worker: App = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await worker.ready();
      try {
        const sub = await call(env.app, 'POST', '/api/v1/admin/webhooks', {
          token: admin,
          body: { url: receiver.url, after: head },
        });
        assert.equal(sub.status, 201, sub.text);
        // a long-poll waiting before the burst is woken by it
        const waiting = get(env.app, `/api/v1/changes?after=${head}&wait=10`, token);
        const answers = await Promise.all(
          Array.from({ length: 12 }, (_, i) => note({ text: `burst-d ${i}` }, `burst-d-${i}`)),
        );
        const ids = new Set(answers.map((a) => a.body.id as number));
        const woken = await waiting;
        assert.ok(woken.body.changes.length > 0);
        const seen = new Set<number>();
        let cursor = head;
        for (;;) {
          const page = (await get(env.app, `/api/v1/changes?after=${cursor}`, token)).body;
          for (const c of page.changes) if (c.kind === 'note') seen.add(c.id);
          cursor = page.next_cursor;
          if (!page.more) break;
        }
        assert.deepEqual(
          [...ids].filter((id) => !seen.has(id)),
          [],
          'the feed lists every note',
        );
        await until('every note delivered', () =>
          [...ids].every((id) =>
            receiver.got.some((r) => r.json.change.kind === 'note' && r.json.change.id === id),
          ),
        );
      } finally {
        await worker.close();
        await receiver.close();
      }
    });

    it('a COMMIT that fails fails every write of its group and leaves nothing of any', async () => {
      // a guard checked only at COMMIT: a deferred reference no note can satisfy
      if (dialect === 'sqlite') {
        await sql`create table commit_guard (production_id integer references productions (id) deferrable initially deferred)`.execute(
          env.handle.db,
        );
        await sql
          .raw(
            `create trigger commit_guard_note after insert on version_notes when new.text = '${REFUSED_AT_COMMIT}'
             begin insert into commit_guard values (-1); end`,
          )
          .execute(env.handle.db);
      } else {
        await sql`create table commit_guard (production_id integer references productions (id) deferrable initially deferred)`.execute(
          env.handle.db,
        );
        await sql
          .raw(
            `create function commit_guard_note() returns trigger language plpgsql as $$
             begin insert into commit_guard values (-1); return new; end $$;
             create trigger commit_guard_note after insert on version_notes for each row
             when (new.text = '${REFUSED_AT_COMMIT}') execute function commit_guard_note()`,
          )
          .execute(env.handle.db);
      }
      try {
        // alone, such a note fails at its COMMIT and leaves nothing
        const alone = await note({ text: REFUSED_AT_COMMIT }, 'burst-e-alone');
        assert.ok(alone.status >= 500, `${alone.status} ${alone.text}`);
        groups.length = 0;
        const answers = await Promise.all([
          note({ text: 'burst-e 1' }, 'burst-e-1'),
          note({ text: REFUSED_AT_COMMIT }, 'burst-e-2'),
          note({ text: 'burst-e 3' }, 'burst-e-3'),
        ]);
        const statuses = answers.map((a) => a.status);
        // whichever writes shared the failed COMMIT failed with it; none was acknowledged without landing
        assert.ok(statuses[1]! >= 500, `${statuses}`);
        const landed = await notesWith('burst-e');
        for (const [i, a] of answers.entries()) {
          if (a.status === 201) assert.ok(landed.includes(a.body.text), `acknowledged ${i} landed`);
          else assert.ok(a.status >= 500, `${a.status} ${a.text}`);
        }
        assert.equal(landed.length, statuses.filter((s) => s === 201).length);
        assert.deepEqual(await notesWith(REFUSED_AT_COMMIT), []);
        const keys = await env.handle.db
          .selectFrom('idempotency_keys')
          .where('key', 'like', 'burst-e-%')
          .select('key')
          .execute();
        assert.equal(keys.length, landed.length, 'a failed write keeps no idempotency record');
        // the next writes commit as usual
        assert.equal((await note({ text: 'burst-e after' }, 'burst-e-after')).status, 201);
      } finally {
        await sql`drop trigger commit_guard_note${sql.raw(dialect === 'postgres' ? ' on version_notes' : '')}`.execute(
          env.handle.db,
        );
        await sql`drop table commit_guard`.execute(env.handle.db);
      }
    });

    it('the group-size histogram counts the writes committed together', async () => {
      const metricsKey = await env.mint({ production: 'film', scopes: ['metrics'] });
      const scrape = async () => {
        const r = await get(env.app, '/metrics', metricsKey);
        assert.equal(r.status, 200);
        const value = (name: string) =>
          Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(r.text)?.[1] ?? 'NaN');
        return {
          count: value('prodgraph_write_group_size_count'),
          sum: value('prodgraph_write_group_size_sum'),
          writes: value('prodgraph_writes_committed_total'),
        };
      };
      const before = await scrape();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => note({ text: `burst-f ${i}` }, `burst-f-${i}`)),
      );
      assert.ok(answers.every((a) => a.status === 201));
      const now = await scrape();
      assert.equal(now.sum - before.sum, 10, 'every write counted once');
      assert.equal(now.writes - before.writes, 10);
      assert.ok(now.count - before.count < 10, 'in fewer transactions than writes');
    });
  });
}
