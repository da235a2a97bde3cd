import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, PostgresAdapter, SqliteAdapter, sql } from 'kysely';
import type { Db } from '../src/db/index.js';
import { insertMany } from '../src/db/driver/bulk-insert.js';
import { compiledOnce } from '../src/db/driver/compiled.js';
import { inWriteTransaction } from '../src/db/write-hooks.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';

/*
 * The machinery of our drivers (src/db/driver/) that an upgrade of Kysely, pg or better-sqlite3
 * could break without an error: each test here fails when one piece stops doing its work, not
 * only when it throws.
 */

const activityRow = (productionId: number, summary: string) => ({
  production_id: productionId,
  at: '2026-01-01T00:00:00.000Z',
  actor: 'driver test',
  verb: 'noted',
  summary,
});

for (const dialect of DIALECTS) {
  describe(`our database driver [${dialect}]`, () => {
    let env: TestEnv;
    let db: Db;
    let productionId: number;
    before(async () => {
      env = await createEnv(dialect);
      db = env.handle.db;
      productionId = (await new Factory(db).production({ code: 'driver' })).id;
    });
    after(() => env.close());

    it("Kysely's compiled queries and executor still have the shape compiledOnce and the bulk shapes use", async () => {
      const compiled = db.selectFrom('activity').where('production_id', '=', 7).select('id').compile();
      assert.equal(typeof compiled.sql, 'string');
      assert.deepEqual(compiled.parameters, [7]);
      assert.ok(compiled.query && compiled.queryId, 'the operation tree and query id travel with it');
      const raw = CompiledQuery.raw('select 1 as one', []);
      assert.deepEqual([raw.sql, raw.parameters], ['select 1 as one', []]);
      // a compiled statement runs again with other parameters: what compiledOnce does on every call
      const { rows } = await db.executeQuery({ ...compiled, parameters: [productionId] });
      assert.ok(Array.isArray(rows));
      const executor = db.getExecutor();
      assert.ok(Array.isArray(executor.plugins) && executor.plugins.length === 0);
      assert.ok(db.withSchema('x').getExecutor().plugins.length > 0, 'a plugin shows on the executor');
      const Adapter = dialect === 'postgres' ? PostgresAdapter : SqliteAdapter;
      assert.ok(executor.adapter instanceof Adapter, 'the dialect is told by its adapter');
      await db.transaction().execute(async (trx) => {
        assert.equal(
          trx.getExecutor().adapter,
          executor.adapter,
          'a transaction shares its handle’s adapter',
        );
      });
    });

    it('a compiled-once statement is compiled once and runs with fresh parameters', async () => {
      let builds = 0;
      const count = compiledOnce(
        (d: Db, pid: number, summary: string) => {
          builds++;
          return d
            .selectFrom('activity')
            .where('production_id', '=', pid)
            .where('summary', '=', summary)
            .select((eb) => eb.fn.countAll<number>().as('n'));
        },
        [1, 'sample'],
      );
      await insertMany(db, 'activity', [activityRow(productionId, 'counted')]);
      const [found] = await count(db, productionId, 'counted');
      const [none] = await count(db, productionId, 'absent');
      assert.deepEqual([Number(found!.n), Number(none!.n), builds], [1, 0, 1]);
    });

    it('group commit groups: writes sent together take fewer COMMITs than writes', async () => {
      const commits: number[] = [];
      const groups: number[] = [];
      const stop = env.handle.observe({
        transactionCommitted: () => commits.push(1),
        committed: (size) => groups.push(size),
      });
      const writes = 20;
      try {
        await Promise.all(
          Array.from({ length: writes }, (_, i) =>
            inWriteTransaction(db, { productionId, actor: null }, undefined, async (trx) => {
              await insertMany(trx, 'activity', [activityRow(productionId, `grouped ${i}`)]);
            }),
          ),
        );
      } finally {
        stop();
      }
      assert.equal(
        groups.reduce((a, b) => a + b, 0),
        writes,
        'every write committed',
      );
      assert.ok(commits.length < writes, `${writes} writes took ${commits.length} COMMITs`);
      assert.equal(commits.length, groups.length, 'one COMMIT a group');
    });

    it('transaction control stays out of the query log (its counts are of the statements a request runs)', async () => {
      env.queries.sql.length = 0;
      await db.transaction().execute((trx) => sql`select 1`.execute(trx));
      assert.deepEqual(env.queries.sql, ['select 1']);
    });

    it('a bulk insert compiles to the shape expected of its dialect', async () => {
      env.queries.sql.length = 0;
      const rows = [1, 2, 3].map((i) => activityRow(productionId, `shape ${i}`));
      await insertMany(db, 'activity', rows);
      const inserts = env.queries.sql.filter((q) => q.startsWith('insert'));
      const columns = '("production_id", "at", "actor", "verb", "summary")';
      assert.deepEqual(
        inserts,
        dialect === 'postgres'
          ? [
              `insert into "activity" ${columns} select * from unnest($1::integer[], $2::text[], $3::text[], $4::text[], $5::text[])`,
            ]
          : // three rows: a statement of two, then one of one (powers of two)
            [
              `insert into "activity" ${columns} values (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)`,
              `insert into "activity" ${columns} values (?, ?, ?, ?, ?)`,
            ],
      );
    });

    if (dialect === 'sqlite') {
      it('SQLite: a write transaction begins IMMEDIATE, so a second writer waits instead of failing', async () => {
        if (env.config.db.dialect !== 'sqlite') return;
        const path = env.config.db.path;
        await sql`create table lock_probe (n integer)`.execute(db);
        const waits: boolean[] = [];
        const stop = env.handle.observe({ busyWait: (_ms, acquired) => waits.push(acquired) });
        // another process takes the write lock, writes (so a snapshot taken before its commit is
        // stale), and commits a moment later
        const holder = spawn(
          process.execPath,
          [
            '-e',
            `const db = new (require(process.argv[1]))(process.argv[2]);
             db.exec('begin immediate; insert into lock_probe values (1)');
             console.log('locked');
             setTimeout(() => { db.exec('commit'); db.close(); }, 1500);`,
            createRequire(import.meta.url).resolve('better-sqlite3'),
            path,
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        );
        try {
          const [line] = (await once(holder.stdout, 'data')) as [Buffer];
          assert.equal(line.toString().trim(), 'locked');
          // reads, then writes: begun DEFERRED it would fail with SQLITE_BUSY, since its read's
          // snapshot is stale once the other process commits
          await db.transaction().execute(async (trx) => {
            const { rows } = await sql<{ n: number }>`select count(*) as n from lock_probe`.execute(trx);
            await sql`insert into lock_probe values (${Number(rows[0]!.n) + 1})`.execute(trx);
          });
        } finally {
          stop();
          if (holder.exitCode === null) await once(holder, 'exit');
        }
        const { rows } = await sql<{ n: number }>`select n from lock_probe order by n`.execute(db);
        assert.deepEqual(
          rows.map((r) => r.n),
          [1, 2],
          'the second writer read the first one’s row',
        );
        assert.deepEqual(waits, [true], 'it waited for the lock, once, and got it');
      });
    }

    if (dialect === 'postgres') {
      it('PostgreSQL: a compiled-once statement is prepared once on a connection and reused by name', async () => {
        const marker = `prepared-${Date.now()}`;
        const lookup = compiledOnce(
          (d: Db, summary: string) => d.selectFrom('activity').where('summary', '=', summary).select('id'),
          ['sample'],
        );
        const kept = await db.transaction().execute(async (trx) => {
          for (let i = 0; i < 3; i++) await lookup(trx, marker);
          return (
            await sql<{ name: string; runs: number }>`
              select name, generic_plans + custom_plans as runs from pg_prepared_statements
              where statement like '%from "activity" where "summary" = $1'`.execute(trx)
          ).rows;
        });
        assert.equal(kept.length, 1, 'one prepared statement on the connection');
        assert.match(kept[0]!.name, /^prodgraph_\d+$/);
        assert.equal(Number(kept[0]!.runs), 3, 'prepared once, executed three times');
      });

      it('PostgreSQL: a bulk shape is a named statement too', async () => {
        const kept = await db.transaction().execute(async (trx) => {
          await insertMany(trx, 'activity', [activityRow(productionId, 'named bulk')]);
          return (
            await sql<{ statement: string }>`
              select statement from pg_prepared_statements where statement like '%unnest%'`.execute(trx)
          ).rows;
        });
        assert.ok(
          kept.some((r) => r.statement.startsWith('insert into "activity"')),
          'the unnest insert is prepared',
        );
      });

      it('PostgreSQL: a text without parameters may hold several statements (group commit sends two at once)', async () => {
        await db.transaction().execute(async (trx) => {
          await sql.raw('savepoint "a"; release savepoint "a"; savepoint "b"').execute(trx);
          await sql.raw('release savepoint "b"').execute(trx);
        });
      });

      it('PostgreSQL: each wait for a pooled connection is reported', async () => {
        const waits: boolean[] = [];
        const stop = env.handle.observe({ poolWait: (_ms, failed) => waits.push(failed) });
        try {
          await sql`select 1`.execute(db);
        } finally {
          stop();
        }
        assert.deepEqual(waits, [false]);
      });
    }
  });
}
