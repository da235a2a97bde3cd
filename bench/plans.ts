import { SigningSecrets } from '../src/auth/signing-secrets.js';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import type { Principal } from '../src/auth/principal.js';
import { loadConfig, parseDbTarget } from '../src/config.js';
import type { AppContext } from '../src/context.js';
import { openDatabase } from '../src/db/index.js';
import { authenticate } from '../src/auth/key-service.js';
import { FileMediaStore } from '../src/media/store.js';
import { getAsset, listAssets } from '../src/modules/assets/service.js';
import { characterBundle, sceneBundle } from '../src/modules/bundles/service.js';
import { getProduction } from '../src/modules/production/service.js';
import { purchaseOrders } from '../src/modules/purchase-orders/service.js';
import { listScenes } from '../src/modules/scenes/service.js';
import { listTurnovers } from '../src/modules/turnovers/service.js';
import { ChangeWatch } from '../src/modules/changes/watch.js';
import { realClock } from '../src/util/wait-clock.js';
import type { Dataset } from './dataset.js';
import type { Fixture } from './fixture.js';

/**
 * The query plans of the hot routes: every statement each route's service actually runs is
 * captured (SQL and parameters, through Kysely's log), then explained and timed on its own,
 * first as imported and again after ANALYZE. SQLite: EXPLAIN QUERY PLAN and the median of 20
 * executions of the prepared statement. PostgreSQL: EXPLAIN (ANALYZE, BUFFERS).
 */

interface Captured {
  sql: string;
  parameters: readonly unknown[];
}

interface Scenario {
  name: string;
  run: (ctx: AppContext, wide: Principal, vendor: Principal) => Promise<unknown>;
}

const scenarios = (f: Fixture): Scenario[] => [
  { name: 'scene bundle, production-wide', run: (c, w) => sceneBundle(c, w, f.scenes[0]!) },
  { name: 'scene bundle, engagement-bound', run: (c, _w, v) => sceneBundle(c, v, f.vendorScenes[0]!) },
  {
    name: 'character bundle, engagement-bound',
    run: (c, _w, v) => characterBundle(c, v, f.vendorCharacters[0]!),
  },
  { name: 'GET /assets/{id} (a character)', run: (c, w) => getAsset(c, w, f.characters[0]!) },
  { name: 'GET /production', run: (c, w) => getProduction(c, w) },
  { name: 'GET /turnovers, engagement-bound', run: (c, _w, v) => listTurnovers(c, v) },
  { name: 'GET /purchase-orders, engagement-bound', run: (c, _w, v) => purchaseOrders(c, v) },
  { name: 'GET /scenes', run: (c, w) => listScenes(c, w) },
  {
    name: `GET /assets?department=${f.department.slug}`,
    run: (c, w) => listAssets(c, w, { department: f.department.slug }),
  },
];

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function sqlitePlan(file: string, q: Captured): { plan: string; ms: number } {
  const db = new SQLite(file, { readonly: true });
  try {
    const rows = db.prepare(`explain query plan ${q.sql}`).all(...(q.parameters as unknown[])) as Array<{
      id: number;
      parent: number;
      detail: string;
    }>;
    const depth = new Map<number, number>([[0, -1]]);
    const plan = rows
      .map((r) => {
        const d = (depth.get(r.parent) ?? 0) + 1;
        depth.set(r.id, d);
        return `${'  '.repeat(d)}${r.detail}`;
      })
      .join('\n');
    const stmt = db.prepare(q.sql);
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      stmt.all(...(q.parameters as unknown[]));
      times.push(performance.now() - t);
    }
    return { plan, ms: median(times) };
  } finally {
    db.close();
  }
}

async function postgresPlan(url: string, q: Captured): Promise<{ plan: string; ms: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query(`explain (analyze, buffers) ${q.sql}`, q.parameters as unknown[]);
    const lines = res.rows.map((r: Record<string, string>) => Object.values(r)[0]!);
    const exec = lines.map((l) => /Execution Time: ([\d.]+) ms/.exec(l)).find(Boolean);
    return { plan: lines.join('\n'), ms: exec ? Number(exec[1]) : NaN };
  } finally {
    await client.end();
  }
}

async function captureQueries(dataset: Dataset, fixture: Fixture): Promise<Map<string, Captured[]>> {
  let captured: Captured[] = [];
  const handle = openDatabase(parseDbTarget(dataset.db), {
    onQuery: (e) => captured.push({ sql: e.query.sql, parameters: e.query.parameters }),
  });
  try {
    const config = loadConfig({ db: dataset.db, media: dataset.media });
    const ctx: AppContext = {
      config,
      db: handle.db,
      dialect: dataset.dialect,
      store: new FileMediaStore(dataset.media),
      changes: new ChangeWatch(handle.db),
      secrets: await SigningSecrets.open(handle.db, config),
      clock: realClock,
    };
    const wide = (await authenticate(handle.db, fixture.wideKey))!;
    const vendor = (await authenticate(handle.db, fixture.vendorKey))!;
    const out = new Map<string, Captured[]>();
    captured = [];
    await authenticate(handle.db, fixture.vendorKey);
    out.set('key lookup (every request)', captured);
    for (const s of scenarios(fixture)) {
      captured = [];
      await s.run(ctx, wide, vendor);
      out.set(s.name, captured);
    }
    return out;
  } finally {
    await handle.close();
  }
}

async function explainAll(
  dataset: Dataset,
  queries: Map<string, Captured[]>,
): Promise<Map<string, Array<{ plan: string; ms: number }>>> {
  const out = new Map<string, Array<{ plan: string; ms: number }>>();
  const target = parseDbTarget(dataset.db);
  for (const [name, list] of queries) {
    const plans = [];
    for (const q of list) {
      plans.push(
        target.dialect === 'sqlite' ? sqlitePlan(target.path, q) : await postgresPlan(target.url, q),
      );
    }
    out.set(name, plans);
  }
  return out;
}

/** Markdown: each route's statements with their plan and time as imported and after ANALYZE. */
export async function queryPlans(dataset: Dataset, fixture: Fixture): Promise<string> {
  const queries = await captureQueries(dataset, fixture);
  const before = await explainAll(dataset, queries);
  const handle = openDatabase(parseDbTarget(dataset.db));
  await sql`analyze`.execute(handle.db).finally(() => handle.close());
  const after = await explainAll(dataset, queries);
  const engine = dataset.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const lines = [
    `# Query plans of the hot routes — ${engine}`,
    '',
    dataset.dialect === 'sqlite'
      ? 'Each statement as the service ran it; `EXPLAIN QUERY PLAN` and the median of 20 executions of the prepared statement, first on the database as imported (no statistics), then after `ANALYZE`.'
      : 'Each statement as the service ran it; `EXPLAIN (ANALYZE, BUFFERS)` on the database as imported (autovacuum may already have analysed some tables), then after an explicit `ANALYZE`.',
    '',
    '| route | statements | ms as imported | ms after ANALYZE |',
    '|---|---:|---:|---:|',
  ];
  const total = (xs: Array<{ ms: number }>) => xs.reduce((s, x) => s + x.ms, 0);
  for (const [name, list] of queries) {
    lines.push(
      `| ${name} | ${list.length} | ${total(before.get(name)!).toFixed(2)} | ${total(after.get(name)!).toFixed(2)} |`,
    );
  }
  for (const [name, list] of queries) {
    lines.push('', `## ${name}`);
    list.forEach((q, i) => {
      const b = before.get(name)![i]!;
      const a = after.get(name)![i]!;
      lines.push(
        '',
        `### statement ${i + 1}: ${b.ms.toFixed(3)} ms as imported, ${a.ms.toFixed(3)} ms after ANALYZE`,
        '',
        '```sql',
        q.sql,
        '```',
        `parameters: \`${JSON.stringify(q.parameters).slice(0, 300)}\``,
        '',
        'as imported:',
        '```',
        b.plan,
        '```',
        'after ANALYZE:',
        '```',
        a.plan,
        '```',
      );
    });
  }
  return `${lines.join('\n')}\n`;
}
