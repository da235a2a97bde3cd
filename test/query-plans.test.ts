import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { CompiledQuery } from 'kysely';
import type { GrantKind } from '../src/domain/vocabulary.js';
import { refreshStatistics } from '../src/db/statistics.js';
import { importDocument } from '../src/document/import.js';
import { parseDocument } from '../src/document/parse.js';
import { generatedCode, generateTo } from '../src/generate/index.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';

/*
 * The hot statements must be planned on the index that bounds them by the request's node,
 * whether or not the database has statistics (bench/FINDINGS.md §1): as the rows landed, SQLite
 * and PostgreSQL used to walk every released version (or every approval) of the production.
 * A generated production is imported without statistics, the statements every hot route runs
 * are captured as the routes ran them, and each is explained twice: as imported and after the
 * statistics the importer normally gathers.
 */

const SCALE = 0.05;

async function generatedText(): Promise<string> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  await generateTo(sink, { scale: SCALE, seed: 1 }, 'json');
  return Buffer.concat(chunks).toString('utf8');
}

interface Statement {
  route: string;
  sql: string;
  parameters: readonly unknown[];
}

/** Indexes that cover a whole production: never the way to a handful of nodes' rows. */
const PRODUCTION_WIDE_INDEXES = [
  'versions_production_released',
  'approvals_production_status',
  'media_production',
];
/**
 * A hot statement may read whole only a table that stays small whatever the production's size
 * (productions, departments, …): here, any table of more than this many rows is one that grows.
 */
const LARGE = 5000;
const GROWING_TABLES = [
  'versions',
  'ingredients',
  'approvals',
  'department_notes',
  'version_notes',
  'nodes',
  'edges',
  'grants',
  'shoot_strips',
  'shoot_days',
  'media',
  'deliveries',
  'purchase_orders',
];

async function planOf(env: TestEnv, s: Statement): Promise<string> {
  const prefix = env.dialect === 'sqlite' ? 'explain query plan ' : 'explain (costs off) ';
  const res = await env.handle.db.executeQuery<Record<string, string>>(
    CompiledQuery.raw(prefix + s.sql, [...s.parameters]),
  );
  return res.rows.map((r) => (env.dialect === 'sqlite' ? r.detail : r['QUERY PLAN'])).join('\n');
}

/** Growing tables the plan reads whole. SQLite names a table by its alias: read the aliases back. */
function largeTableScans(env: TestEnv, s: Statement, plan: string, large: Set<string>): string[] {
  if (env.dialect === 'postgres') {
    return [...plan.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1]!).filter((t) => large.has(t));
  }
  const aliases = new Map<string, string>();
  for (const m of s.sql.matchAll(/"(\w+)" as "(\w+)"/g)) aliases.set(m[2]!, m[1]!);
  return [...plan.matchAll(/^SCAN (\w+)/gm)]
    .map((m) => aliases.get(m[1]!) ?? m[1]!)
    .filter((t) => large.has(t));
}

for (const dialect of DIALECTS) {
  describe(`query plans of the hot statements, generated production at scale ${SCALE} [${dialect}]`, () => {
    let env: TestEnv;
    const statements: Statement[] = [];
    const large = new Set<string>();

    before(async () => {
      env = await createEnv(dialect);
      const { production } = await importDocument(env.handle.db, parseDocument(await generatedText()), {
        store: env.store,
        baseDir: env.dir,
        statistics: false,
      });
      const code = generatedCode(1);
      const wide = await env.mint({ production: code, scopes: ['read', 'read:money'] });
      const vendor = await env.mint({ production: code, engagement: 'e001', scopes: ['read', 'read:money'] });
      const db = env.handle.db;
      const e001 = await db
        .selectFrom('engagements')
        .where('production_id', '=', production.id)
        .where('ref', '=', 'e001')
        .select('id')
        .executeTakeFirstOrThrow();
      const granted = (kind: GrantKind) =>
        db
          .selectFrom('grants')
          .where('engagement_id', '=', e001.id)
          .where('kind', '=', kind)
          .where('revoked_at', 'is', null)
          .where('expires_at', 'is', null)
          .select('node_id')
          .orderBy('id')
          .executeTakeFirstOrThrow();
      const firstNode = (kind: string) =>
        db
          .selectFrom('nodes')
          .where('production_id', '=', production.id)
          .where('kind', '=', kind)
          .select('id')
          .orderBy('id')
          .executeTakeFirstOrThrow();
      const vendorScene = (await granted('scene')).node_id!;
      const vendorCharacter = (await granted('character')).node_id!;
      const scene = (await firstNode('scene')).id;
      const character = (await firstNode('character')).id;
      const routes: Array<[string, string, string]> = [
        ['scene bundle, production-wide', wide, `/api/v1/bundles/scene/${scene}`],
        ['scene bundle, engagement-bound', vendor, `/api/v1/bundles/scene/${vendorScene}`],
        ['character bundle, engagement-bound', vendor, `/api/v1/bundles/character/${vendorCharacter}`],
        ['asset record (a character)', wide, `/api/v1/assets/${character}`],
        ['turnovers, engagement-bound', vendor, '/api/v1/turnovers'],
        [
          'turnovers changed since, engagement-bound',
          vendor,
          '/api/v1/turnovers?updated_since=2020-01-01T00:00:00Z',
        ],
        ['submissions, engagement-bound', vendor, '/api/v1/submissions'],
        ['deliveries, production-wide', wide, '/api/v1/deliveries'],
        ['purchase orders, engagement-bound', vendor, '/api/v1/purchase-orders'],
      ];
      for (const [route, token, url] of routes) {
        const start = env.queries.sql.length;
        const res = await env.app.inject({
          method: 'GET',
          url,
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.statusCode, 200, `${route}: ${res.body}`);
        env.queries.sql.slice(start).forEach((sql, i) => {
          if (/"last_used_at"/.test(sql)) return;
          statements.push({ route, sql, parameters: env.queries.parameters[start + i]! });
        });
      }
      assert.ok(statements.length >= routes.length * 2, 'the routes ran their statements');
      for (const table of GROWING_TABLES) {
        const { n } = await db
          .selectFrom(table as 'versions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        if (Number(n) > LARGE) large.add(table);
      }
      assert.ok(
        large.has('versions') && large.has('ingredients'),
        `the fixture is large enough: ${[...large]}`,
      );
    });

    after(async () => env?.close());

    const check = async () => {
      const problems: string[] = [];
      for (const s of statements) {
        const plan = await planOf(env, s);
        const wideIndex = PRODUCTION_WIDE_INDEXES.filter((i) => plan.includes(i));
        const scans = largeTableScans(env, s, plan, large);
        if (wideIndex.length || scans.length) {
          problems.push(
            `${s.route}: ${[...wideIndex, ...scans.map((t) => `scan of ${t}`)].join(', ')}\n${s.sql}\n${plan}`,
          );
        }
      }
      assert.deepEqual(problems, []);
    };

    it('every hot statement is bounded by its node, without statistics', () => check());

    it('and the same plans hold once statistics exist', async () => {
      await refreshStatistics(env.handle.db);
      await check();
    });

    // rebuilt after every write: a count that read every row held the event loop for milliseconds
    it(
      'GET /production counts nodes and deliveries from an index alone',
      { skip: dialect !== 'sqlite' },
      async () => {
        const token = await env.mint({ production: generatedCode(1), scopes: ['read'] });
        const start = env.queries.sql.length;
        const res = await env.app.inject({
          method: 'GET',
          url: '/api/v1/production',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.statusCode, 200);
        const i = env.queries.sql.slice(start).findIndex((sql) => /"logline"/.test(sql));
        assert.ok(i >= 0, 'the production statement ran');
        const plan = await planOf(env, {
          route: 'production',
          sql: env.queries.sql[start + i]!,
          parameters: env.queries.parameters[start + i]!,
        });
        const counts = plan.split('\n').filter((line) => /\b(nodes|deliveries)\b/.test(line));
        assert.equal(counts.length, 3, plan);
        for (const line of counts) assert.match(line, /COVERING INDEX/, plan);
      },
    );
  });
}
