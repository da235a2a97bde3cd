import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { withBulkPageCache } from '../src/db/bulk-cache.js';
import { insertMany, insertManyIds, statementSizes } from '../src/db/driver/bulk-insert.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';

describe('bulk insert statement sizes', () => {
  it('cuts any row count into full statements and powers of two, a dozen shapes at most', () => {
    assert.deepEqual(statementSizes(2_437, 1_000), [1_000, 1_000, 256, 128, 32, 16, 4, 1]);
    assert.deepEqual(statementSizes(0, 1_000), []);
    const shapes = new Set<number>();
    for (let n = 1; n <= 5_000; n++) {
      const sizes = statementSizes(n, 967);
      assert.equal(
        sizes.reduce((a, b) => a + b, 0),
        n,
      );
      for (const s of sizes) shapes.add(s);
    }
    assert.ok(shapes.size <= 11, `${shapes.size} shapes`);
  });
});

for (const dialect of DIALECTS) {
  describe(`bulk insert [${dialect}]`, () => {
    let env: TestEnv;
    let productionId: number;
    before(async () => {
      env = await createEnv(dialect);
      productionId = (await new Factory(env.handle.db).production({ code: 'bulk' })).id;
    });
    after(() => env.close());

    const row = (i: number) => ({
      production_id: productionId,
      at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
      actor: `actor ${i}`,
      verb: 'noted',
      summary: `row ${i}`,
      node_id: null,
      api_key_id: null,
      person_id: null,
    });
    const stored = async (prefix: string) =>
      env.handle.db
        .selectFrom('activity')
        .where('production_id', '=', productionId)
        .where('summary', 'like', `${prefix}%`)
        .select(['id', 'actor', 'summary', 'at'])
        .orderBy('id')
        .execute();

    it('stores text exactly, whatever characters it holds, and null as null', async () => {
      const texts = [
        'a"b',
        'back\\slash',
        '{x,y}',
        'NULL',
        '',
        '  spaced  ',
        'é…\u0001',
        "it's",
        'line\nbreak',
      ];
      const rows = texts.map((t, i) => ({
        ...row(i),
        summary: `exact ${i} ${t}`,
        actor: t,
        api_key_id: i % 2 ? i : null,
      }));
      await insertMany(env.handle.db, 'activity', rows);
      const got = await env.handle.db
        .selectFrom('activity')
        .where('production_id', '=', productionId)
        .where('summary', 'like', 'exact %')
        .select(['summary', 'actor', 'api_key_id'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        got.map((r) => [r.summary, r.actor, r.api_key_id === null ? null : Number(r.api_key_id)]),
        rows.map((r) => [r.summary, r.actor, r.api_key_id]),
      );
    });

    it('writes every row with its own values and answers the ids in row order', async () => {
      const rows = Array.from({ length: 2_437 }, (_, i) => ({ ...row(i), summary: `ordered ${i}` }));
      const ids = await insertManyIds(env.handle.db, 'activity', rows);
      assert.equal(ids.length, rows.length);
      const byId = new Map((await stored('ordered ')).map((r) => [Number(r.id), r]));
      assert.equal(byId.size, rows.length);
      for (const [i, id] of ids.entries()) {
        const r = byId.get(id);
        assert.equal(r?.summary, `ordered ${i}`, `id ${id} is row ${i}`);
        assert.equal(r?.actor, `actor ${i}`);
      }
    });

    it('binds each value to its column whatever the order of a row’s keys', async () => {
      const rows = [0, 1, 2].map((i) => {
        const r = { ...row(i), summary: `keys ${i}` };
        // the same columns, written in reverse order
        return i === 1 ? Object.fromEntries(Object.entries(r).reverse()) : r;
      });
      await insertMany(env.handle.db, 'activity', rows);
      const out = await stored('keys ');
      assert.deepEqual(
        out.map((r) => [r.summary, r.actor]),
        [
          ['keys 0', 'actor 0'],
          ['keys 1', 'actor 1'],
          ['keys 2', 'actor 2'],
        ],
      );
    });

    it('writes rows that leave a column out (its default), as the query builder does', async () => {
      const { node_id: _node, ...short } = { ...row(5), summary: 'short 1' };
      await insertMany(env.handle.db, 'activity', [{ ...row(4), summary: 'short 0' }, short]);
      assert.deepEqual(
        (await stored('short ')).map((r) => r.summary),
        ['short 0', 'short 1'],
      );
    });

    it('a refused row takes every row of its transaction with it', async () => {
      const rows: object[] = Array.from({ length: 1_500 }, (_, i) => ({
        ...row(i),
        summary: `refused ${i}`,
      }));
      rows[1_300] = { ...row(1_300), summary: `refused 1300`, actor: null };
      await assert.rejects(env.handle.db.transaction().execute((trx) => insertMany(trx, 'activity', rows)));
      assert.deepEqual(await stored('refused '), []);
    });

    if (dialect === 'postgres') {
      it('PostgreSQL: one prepared statement whatever the row count, conflicts skipped, rows in order', async () => {
        const start = env.queries.sql.length;
        const named = await env.handle.db.transaction().execute(async (trx) => {
          for (const n of [1, 7, 1_500])
            await insertMany(
              trx,
              'activity',
              Array.from({ length: n }, (_, i) => ({ ...row(i), summary: `shape ${n} ${i}` })),
            );
          const { rows } = await sql<{ statement: string }>`
            select statement from pg_prepared_statements where name like 'prodgraph_%'`.execute(trx);
          return rows.map((r) => r.statement);
        });
        const texts = new Set(env.queries.sql.slice(start, start + 3));
        assert.equal(texts.size, 1);
        const [text] = texts;
        assert.match(text!, /unnest\(/);
        assert.ok(named.includes(text!), 'prepared on the connection that ran it');
        assert.equal((await stored('shape 1500 ')).length, 1_500);

        const events = (keys: string[]) =>
          keys.map((k) => ({
            production_id: productionId,
            dedupe_key: k,
            event_type: 'create',
            source: 'test',
            path: `p/${k}`,
            to_path: null,
            detected_at: '2026-01-01T00:00:00.000Z',
            received_at: '2026-01-01T00:00:00.000Z',
          }));
        await insertMany(env.handle.db, 'storage_events', events(['b']));
        const out = await insertMany<{ dedupe_key: string }>(
          env.handle.db,
          'storage_events',
          events(['a', 'b', 'c', 'a']),
          { returning: ['dedupe_key'], skipConflictsOn: ['production_id', 'dedupe_key'] },
        );
        assert.deepEqual(
          out.map((r) => r.dedupe_key),
          ['a', 'c'],
        );
      });
    }
  });
}

describe('the page cache of a bulk load [sqlite]', () => {
  let env: TestEnv;
  before(async () => {
    env = await createEnv('sqlite');
  });
  after(() => env.close());
  const size = async () =>
    Number((await sql<{ cache_size: number }>`pragma cache_size`.execute(env.handle.db)).rows[0]?.cache_size);

  it('is 256 MB while the load runs, and the connection’s own again after, a refused load too', async () => {
    const own = await size();
    assert.notEqual(own, -262_144);
    for (const outcome of ['loads', 'refused', 'loads again']) {
      let during = 0;
      const load = withBulkPageCache(env.handle.db, async () => {
        during = await size();
        if (outcome === 'refused') throw new Error('refused');
      });
      if (outcome === 'refused') await assert.rejects(load, /refused/);
      else await load;
      assert.equal(during, -262_144, `${outcome}: larger during the load`);
      assert.equal(await size(), own, `${outcome}: restored after`);
    }
  });
});
