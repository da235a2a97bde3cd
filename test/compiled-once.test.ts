import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { compiledOnce } from '../src/db/driver/compiled.js';
import { liveFilesAt } from '../src/modules/storage-library/repository.js';
import type { Db } from '../src/db/index.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';

for (const dialect of DIALECTS) {
  describe(`statements compiled once [${dialect}]`, () => {
    let env: TestEnv;
    let productionId: number;
    before(async () => {
      env = await createEnv(dialect);
      productionId = (await new Factory(env.handle.db).production({ code: 'compiled' })).id;
    });
    after(() => env.close());

    const notes = async () =>
      (
        await env.handle.db
          .selectFrom('activity')
          .where('production_id', '=', productionId)
          .select('summary')
          .orderBy('id')
          .execute()
      ).map((r) => r.summary);

    it('is built once, and runs in each transaction with that transaction', async () => {
      let builds = 0;
      const insert = compiledOnce(
        (db: Db, pid: number, summary: string) => {
          builds++;
          return db
            .insertInto('activity')
            .values({
              production_id: pid,
              at: sql.lit('2026-01-01T00:00:00.000Z'),
              actor: sql.lit('test'),
              verb: sql.lit('noted'),
              summary,
            })
            .returning('id');
        },
        [1, 'sample'],
      );
      await insert(env.handle.db, productionId, 'outside');
      await env.handle.db.transaction().execute((trx) => insert(trx, productionId, 'committed'));
      await assert.rejects(
        env.handle.db.transaction().execute(async (trx) => {
          await insert(trx, productionId, 'rolled back');
          throw new Error('refused');
        }),
        /refused/,
      );
      assert.equal(builds, 1, 'one build for the handle and both transactions');
      assert.deepEqual(
        await notes(),
        ['outside', 'committed'],
        'the rolled-back row is gone with its transaction',
      );
    });

    it('refuses at once a builder whose parameters come out in another order than its sample', async () => {
      const before = await notes();
      // the SQL names the summary before the production: the sample's order would bind each to the other
      const swapped = compiledOnce(
        (db: Db, pid: number, summary: string) =>
          db.insertInto('activity').values({
            summary,
            production_id: pid,
            at: sql.lit('2026-01-01T00:00:00.000Z'),
            actor: sql.lit('test'),
            verb: sql.lit('noted'),
          }),
        [1, 'sample'],
      );
      await assert.rejects(
        swapped(env.handle.db, productionId, 'never'),
        /not its sample \[1,"sample"\] in that order/,
      );
      assert.deepEqual(await notes(), before, 'nothing was written');
    });

    it('refuses a handle with a plugin of its own, whose SQL the kept statement would not have', async () => {
      const count = compiledOnce(
        (db: Db, pid: number) =>
          db
            .selectFrom('activity')
            .where('production_id', '=', pid)
            .select((eb) => eb.fn.countAll().as('n')),
        [1],
      );
      await count(env.handle.db, productionId);
      await assert.rejects(count(env.handle.db.withSchema('elsewhere'), productionId), /without plugins/);
    });

    if (dialect === 'postgres') {
      it('PostgreSQL: a statement built per call is prepared on its connection once it repeats', async () => {
        const marker = `repeat-${Date.now()}`;
        const statements = await env.handle.db.transaction().execute(async (trx) => {
          const prepared = async () =>
            (
              await sql<{ statement: string }>`
                select statement from pg_prepared_statements where name like 'prodgraph_%'`.execute(trx)
            ).rows.map((r) => r.statement);
          const run = () =>
            trx
              .selectFrom('activity')
              .where('production_id', '=', productionId)
              .where('summary', '=', marker)
              .select('id')
              .execute();
          await run();
          const once = await prepared();
          await run();
          await run();
          return { once, after: await prepared() };
        });
        const text = (list: string[]) => list.filter((q) => q.includes('"summary" = $2'));
        assert.deepEqual(text(statements.once), [], 'a statement run once is not kept');
        assert.equal(text(statements.after).length, 1, 'kept once it repeats');
      });

      it('PostgreSQL: the library lookup is planned on each run, so a library grown past its statistics is read by its index', async () => {
        // A first scan grows the library from nothing to millions of rows within minutes; a
        // plan kept from when it was small reads the whole table for every batch.
        await sql`analyze library_files`.execute(env.handle.db);
        const trx = await env.handle.db.startTransaction().execute();
        try {
          await sql`insert into library_files (production_id, path, detected_at, updated_at)
            select ${productionId}, 'grown/' || g || '.exr', 't', 't' from generate_series(1, 20000) g`.execute(
            trx,
          );
          for (let i = 0; i < 8; i++) await liveFilesAt(trx, productionId, [`grown/${i}.exr`, 'missing.exr']);
          const kept = await sql<{ statement: string }>`
            select statement from pg_prepared_statements where statement like '%library_files%'`.execute(trx);
          const found = await liveFilesAt(trx, productionId, [
            'grown/7.exr',
            'grown/19999.exr',
            'missing.exr',
          ]);
          assert.deepEqual(kept.rows, [], 'never a kept (generic) plan on the connection');
          assert.deepEqual(
            found.map((f) => f.path).sort(),
            ['grown/19999.exr', 'grown/7.exr'],
            'answers the live rows asked for',
          );
        } finally {
          await trx.rollback().execute();
        }
      });
    }
  });
}
