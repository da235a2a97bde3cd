/*
 * One PostgreSQL database shared by several installs (or parallel test files), each in a schema of
 * its own: migrating ours must not fail because another install's tables or schema are dropped
 * while the migrator looks across the database for its bookkeeping tables.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrationState, openAndMigrate } from '../src/db/index.js';

const url = process.env.PRODGRAPH_TEST_PG;

describe(
  'migrating beside other schemas that come and go [postgres]',
  { skip: !url && 'PostgreSQL only' },
  () => {
    const admin = new pg.Client({ connectionString: url });
    const ours: string[] = [];
    before(() => admin.connect());
    after(async () => {
      for (const schema of ours) await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });

    /** Another install: a schema with tables made and dropped, over and over, until told to stop. */
    function churn(): { stop(): Promise<number> } {
      let running = true;
      const client = new pg.Client({ connectionString: url });
      const done = (async () => {
        await client.connect();
        let rounds = 0;
        try {
          while (running) {
            const other = `churn_${randomBytes(5).toString('hex')}`;
            await client.query(`create schema ${other}`);
            for (let i = 0; i < 8; i++)
              await client.query(`create table ${other}.t${i} (id serial primary key, v text)`);
            for (let i = 0; i < 8; i++) await client.query(`drop table ${other}.t${i}`);
            await client.query(`drop schema ${other} cascade`);
            rounds++;
          }
        } finally {
          await client.end();
        }
        return rounds;
      })();
      return {
        stop: async () => {
          running = false;
          return done;
        },
      };
    }

    it('every migration and every look at where a schema stands succeeds', async () => {
      const others = [churn(), churn()];
      try {
        for (let i = 0; i < 4; i++) {
          const schema = `t_${randomBytes(6).toString('hex')}`;
          ours.push(schema);
          await admin.query(`create schema ${schema}`);
          const handle = await openAndMigrate({ dialect: 'postgres', url: url! }, { schema, poolSize: 2 });
          try {
            assert.equal(await migrationState(handle.db, 'postgres'), 'current');
            // what the migrator looked through: our schema's tables, whole, and nobody else's
            const tables = await handle.db.introspection.getTables();
            assert.ok(tables.length > 20 && tables.every((t) => t.schema === schema && t.columns.length > 0));
            assert.ok(!tables.some((t) => t.name.startsWith('kysely_')));
            const internal = await handle.db.introspection.getTables({ withInternalKyselyTables: true });
            assert.ok(internal.some((t) => t.name === 'kysely_migration'));
          } finally {
            await handle.close();
          }
        }
      } finally {
        const rounds = await Promise.all(others.map((o) => o.stop()));
        assert.ok(
          rounds[0]! > 0 && rounds[1]! > 0,
          `the other installs churned: ${rounds.join(', ')} rounds`,
        );
      }
    });
  },
);
