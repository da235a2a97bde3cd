import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../src/app.js';
import { ChangeLog, commitChanges } from '../src/db/change-log.js';
import { importDocument } from '../src/document/import.js';
import { parseDocument } from '../src/document/parse.js';
import { createEnv, DIALECTS, openSecondHandle, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { until } from './support/receiver.js';
import { TestClock } from './support/test-clock.js';
import { jpeg, upload } from './support/write.js';

interface Change {
  cursor: string;
  at: string;
  kind: string;
  id: number;
  op: string;
  actor: string | null;
}

const line = (c: Change) => `${c.kind}:${c.id}:${c.op}`;

for (const dialect of DIALECTS) {
  describe(`the change feed GET /changes [${dialect}]`, () => {
    let env: TestEnv;
    let key: string;
    let refs: Record<string, number>;
    let film: number;
    // the app's long-polls wait on a clock that moves only when a test moves it: an answer
    // before that is a change's doing, never a wait running out
    const clock = new TestClock();

    before(async () => {
      env = await createEnv(dialect, {}, { clock });
      refs = (await env.import(smallProduction('film'))).refs;
      await env.import(smallProduction('other'));
      key = await env.mint({ production: 'film' });
      film = (
        await env.handle.db
          .selectFrom('productions')
          .where('code', '=', 'film')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
    });
    after(() => env.close());

    const feed = async (query: string, token = key) => {
      const r = await get(env.app, `/api/v1/changes${query}`, token);
      assert.equal(r.status, 200, r.text);
      return r.body as { changes: Change[]; next_cursor: string; more: boolean };
    };
    const head = async () => (await feed('?after=now')).next_cursor;
    const addAsset = async (label: string) => {
      const r = await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label } });
      assert.equal(r.status, 201, r.text);
      return r.body.node_id as number;
    };

    it('refuses what it must: 401 without a key, 403 to vendor keys and keys without read, 422 for bad input', async () => {
      assert.equal((await get(env.app, '/api/v1/changes')).status, 401);
      const vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read'] });
      const v = await get(env.app, '/api/v1/changes', vendor);
      assert.equal(v.status, 403);
      assert.equal(v.body.code, 'engagement_door');
      const writeOnly = await env.mint({ production: 'film', scopes: ['write'] });
      const w = await get(env.app, '/api/v1/changes', writeOnly);
      assert.equal(w.status, 403);
      assert.equal(w.body.code, 'scope_missing');
      for (const q of [
        '?after=12',
        '?after=c1.',
        '?after=c1.MDEy',
        '?after=c1.LTE',
        '?after=nope',
        '?limit=0',
        '?limit=1.5',
        '?wait=-1',
        '?wait=x',
        '?since=1',
      ]) {
        const r = await get(env.app, `/api/v1/changes${q}`, key);
        assert.equal(r.status, 422, `${q}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_field');
      }
    });

    it('answers a mixed series of writes in commit order, one entry per object and write, named as activity names them', async () => {
      const start = await head();
      const lamp = await addAsset('Lamp');
      const coat = refs['co-coat']!;
      const note = await call(env.app, 'POST', `/api/v1/assets/${coat}/notes`, {
        token: key,
        body: { text: 'Hem is long' },
      });
      assert.equal(note.status, 201);
      const landed = await upload(env.app, `/api/v1/assets/${lamp}/versions`, {
        token: key,
        files: [{ name: 'still.jpg', bytes: await jpeg(3), type: 'image/jpeg' }],
      });
      assert.equal(landed.status, 201, landed.text);
      const page = await feed(`?after=${start}`);
      const version = landed.body.id as number;
      const media = (
        await env.handle.db
          .selectFrom('versions')
          .where('id', '=', version)
          .select('media_id')
          .executeTakeFirst()
      )?.media_id;
      assert.deepEqual(page.changes.slice(0, 1).map(line), [`asset:${lamp}:created`]);
      assert.deepEqual(
        page.changes.slice(1, 3).map(line).sort(),
        [`asset:${coat}:updated`, `note:${note.body.id}:created`].sort(),
      );
      assert.deepEqual(
        page.changes.slice(3).map(line).sort(),
        [`asset:${lamp}:updated`, `media:${media}:created`, `version:${version}:created`].sort(),
      );
      assert.equal(page.more, false);
      assert.equal(page.next_cursor, page.changes.at(-1)!.cursor);
      // the activity of those writes names the same actor
      const activity = await get(env.app, '/api/v1/activity?limit=3', key);
      const actors = new Set((activity.body as Array<{ actor: string }>).map((a) => a.actor));
      assert.deepEqual(new Set(page.changes.map((c) => c.actor)), actors);
      assert.ok(page.changes.every((c) => c.actor === 'test key' && !String(c.actor).includes('@')));
      // nothing after the last one
      assert.deepEqual((await feed(`?after=${page.next_cursor}`)).changes, []);
    });

    it('pages with limit: every change exactly once, `more` until the end, the cursor chains', async () => {
      const start = await head();
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await addAsset(`Prop ${i}`));
      const seen: string[] = [];
      let cursor = start;
      let pages = 0;
      for (;;) {
        const page = await feed(`?after=${cursor}&limit=2`);
        pages++;
        seen.push(...page.changes.map(line));
        cursor = page.next_cursor;
        if (!page.more) break;
      }
      assert.deepEqual(
        seen,
        ids.map((id) => `asset:${id}:created`),
      );
      assert.equal(pages, 3);
      // a read of the whole log from the start ends with the same changes
      const all = await feed('?limit=100000');
      assert.ok(all.changes.length <= 1000);
    });

    it('logs a re-import and another production’s writes stay out', async () => {
      const start = await head();
      const reimport = (code: string, title: string) =>
        importDocument(
          env.handle.db,
          parseDocument(
            JSON.stringify(
              smallProduction(code, { production: { ...smallProduction(code).production, title } }),
            ),
          ),
          { store: env.store, baseDir: env.dir, replace: true },
        );
      await reimport('other', 'Changed');
      assert.deepEqual((await feed(`?after=${start}`)).changes, []);
      await reimport('film', 'Renamed');
      const page = await feed(`?after=${start}`);
      assert.ok(
        page.changes.some((c) => line(c) === `production:${film}:updated`),
        page.changes.map(line).join(),
      );
      assert.ok(page.changes.every((c) => c.actor === 'prodgraph import'));
    });

    /** The long-poll is held: the app's watch has its waiter (it has not answered). */
    const heldWaiting = (app: App) => until('the long-poll held', () => app.ctx.changes.waiting === 1);

    it('long-polls: an empty wait answers when the next write commits, within a second', async () => {
      const start = await head();
      const waiting = feed(`?after=${start}&wait=10`);
      await heldWaiting(env.app);
      const written = Date.now();
      const id = await addAsset('Awaited');
      const writeTook = Date.now() - written;
      const page = await waiting;
      // woken by the commit (its clock never moved, so the 10 s wait could not end), and
      // promptly: the bound scales with the write's own time (the control), so a loaded
      // machine does not fail it
      assert.deepEqual(page.changes.map(line), [`asset:${id}:created`]);
      const after = Date.now() - written;
      assert.ok(
        after < Math.max(1000, 3 * writeTook),
        `answered ${after} ms after the write (${writeTook} ms)`,
      );
    });

    it('long-polls: with nothing to say it answers empty at the end of the wait, keeping the cursor', async () => {
      const start = await head();
      const waiting = feed(`?after=${start}&wait=1`);
      await heldWaiting(env.app);
      clock.advance(999);
      assert.equal(env.app.ctx.changes.waiting, 1, 'still held a millisecond before its wait ends');
      clock.advance(1);
      const page = await waiting;
      assert.deepEqual(page.changes, []);
      assert.equal(page.next_cursor, start);
    });

    it('long-polls: a change committed by another process (its own connection, no in-process signal) wakes it', async () => {
      const start = await head();
      const other = await openSecondHandle(env);
      try {
        const waiting = feed(`?after=${start}&wait=10`);
        await heldWaiting(env.app);
        const written = Date.now();
        await other.db.transaction().execute(async (trx) => {
          await commitChanges(
            trx,
            { productionId: film, actor: 'elsewhere' },
            new ChangeLog().updated('scene', refs['sc1']!),
          );
        });
        const page = await waiting;
        assert.deepEqual(page.changes.map(line), [`scene:${refs['sc1']}:updated`]);
        assert.ok(Date.now() - written < 1000, `answered ${Date.now() - written} ms after the commit`);
      } finally {
        await other.close();
      }
    });

    it('a cursor stays valid across a restart', async () => {
      const start = await head();
      const id = await addAsset('Before restart');
      const app = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
      });
      try {
        const r = await get(app, `/api/v1/changes?after=${start}`, key);
        assert.deepEqual(r.body.changes.map(line), [`asset:${id}:created`]);
      } finally {
        await app.close();
      }
    });

    it('closing the server answers held long-polls at once', async () => {
      // its clock never moves: the wait cannot end but by the close
      const app = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        clock: new TestClock(),
      });
      const waiting = get(app, `/api/v1/changes?after=${await head()}&wait=30`, key);
      await heldWaiting(app);
      const t0 = Date.now();
      await app.close();
      const r = await waiting;
      assert.ok(Date.now() - t0 < 2000);
      assert.ok(r.status === 200 || r.status === 503, String(r.status));
    });

    it('several writers at once: a reader following the feed sees every change exactly once, in id order', async () => {
      const start = await head();
      const other = await openSecondHandle(env);
      const seen: Change[] = [];
      let done = false;
      const reader = (async () => {
        let cursor = start;
        while (!done) {
          const page = await feed(`?after=${cursor}&wait=1`);
          seen.push(...page.changes);
          cursor = page.next_cursor;
        }
        // drain what committed last
        for (;;) {
          const page = await feed(`?after=${cursor}`);
          if (page.changes.length === 0) break;
          seen.push(...page.changes);
          cursor = page.next_cursor;
        }
      })();
      // two connections on PostgreSQL; one on SQLite, whose in-process connections would
      // block each other's event loop (separate processes take turns on the file lock)
      const handles = dialect === 'postgres' ? [env.handle, other] : [env.handle, env.handle];
      const writers = handles.map(async (h, w) => {
        for (let i = 0; i < 15; i++) {
          await h.db.transaction().execute(async (trx) => {
            const log = new ChangeLog();
            for (let k = 0; k < 3; k++) log.updated('scene', 1_000_000 + w * 1000 + i * 10 + k);
            await commitChanges(trx, { productionId: film, actor: `writer ${w}` }, log);
          });
        }
      });
      try {
        await Promise.all(writers);
      } finally {
        done = true;
        // its last long-poll waits on the test's clock: move it on until the reader has finished
        let finished = false;
        const ended = reader.finally(() => (finished = true));
        await until('the reader to finish', () => {
          clock.advance(1000);
          return finished;
        });
        await ended;
        await other.close();
      }
      const all = (await feed(`?after=${start}&limit=1000`)).changes;
      assert.equal(all.length, 90);
      assert.deepEqual(
        seen.map((c) => c.cursor),
        all.map((c) => c.cursor),
      );
    });
  });
}
