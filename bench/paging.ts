/*
 * What paging and updated_since buy a client that polls a large production: the bytes and
 * time of one GET /assets (the whole list) against one page and against an `updated_since`
 * poll after a single write, each as a ratio to a control (GET /healthz) measured in the same
 * run, in-process through app.inject (no network, so the ratios are the server's own work).
 *
 *   node --import tsx bench/paging.ts [--scale 0.67] [--rounds 15] [--pg URL]
 */
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { mintKey } from '../src/auth/key-service.js';
import { openAndMigrate } from '../src/db/index.js';
import { prepareDataset } from './dataset.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '0.67' },
    rounds: { type: 'string', default: '15' },
    pg: { type: 'string' },
  },
});
const scale = Number(values.scale);
const rounds = Number(values.rounds);

const dataset = await prepareDataset({
  scale,
  seed: 1,
  duration: 0,
  warmup: 0,
  connections: 1,
  pg: values.pg ?? null,
  only: [],
  analyze: false,
  plans: false,
  cpuProf: false,
  logLevel: 'silent',
  save: false,
  soak: 0,
  loader: 'autocannon',
  workers: [],
});
const config = loadConfig({ db: dataset.db, media: dataset.media }, { PRODGRAPH_LOG_LEVEL: 'silent' });
const database = await openAndMigrate(config.db);
const app = await buildApp({ config, database, logger: false });
await app.ready();
const code = `generated-1`;
const { token } = await mintKey(database.db, { production: code, label: 'paging bench' });
const headers = { authorization: `Bearer ${token}` };

async function measure(url: string): Promise<{ ms: number; bytes: number; rows: number }> {
  const times: number[] = [];
  let bytes = 0;
  let rows = 0;
  for (let i = 0; i < rounds + 2; i++) {
    const t0 = performance.now();
    const r = await app.inject({ url, headers });
    const t = performance.now() - t0;
    if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body.slice(0, 200)}`);
    if (i >= 2) times.push(t); // two warm-up rounds
    bytes = r.rawPayload.length;
    rows = url.startsWith('/healthz') ? 0 : (JSON.parse(r.body) as unknown[]).length;
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, bytes, rows };
}

// one write, then the instant before it is what a poller last saw
const assets = JSON.parse((await app.inject({ url: '/api/v1/assets?limit=1', headers })).body) as Array<{
  node_id: number;
}>;
const since = new Date().toISOString();
await new Promise((r) => setTimeout(r, 5));
const noted = await app.inject({
  method: 'POST',
  url: `/api/v1/assets/${assets[0]!.node_id}/notes`,
  headers,
  payload: { text: 'paging bench' },
});
if (noted.statusCode !== 201) throw new Error(`note: ${noted.statusCode}`);
const middle = await app.inject({ url: '/api/v1/assets?limit=10000', headers });
const cursor = /cursor=([^>&]+)/.exec(String(middle.headers.link))?.[1];

const cases: Array<[string, string]> = [
  ['control GET /healthz', '/healthz'],
  ['GET /assets (whole list)', '/api/v1/assets'],
  ['GET /assets?limit=100 (first page)', '/api/v1/assets?limit=100'],
  ['GET /assets?limit=100&cursor= (deep page)', `/api/v1/assets?limit=100&cursor=${cursor}`],
  [
    'GET /assets?updated_since= (after one write)',
    `/api/v1/assets?updated_since=${encodeURIComponent(since)}`,
  ],
  ['GET /scenes (whole list)', '/api/v1/scenes'],
  ['GET /scenes?limit=100', '/api/v1/scenes?limit=100'],
];
const results: Array<[string, { ms: number; bytes: number; rows: number }]> = [];
const control1 = await measure('/healthz');
for (const [name, url] of cases) results.push([name, await measure(url)]);
const control2 = await measure('/healthz');
const control = (control1.ms + control2.ms) / 2;

console.log(`\n${dataset.dialect}, scale ${scale}, median of ${rounds} rounds, in-process (app.inject)\n`);
console.log('| request | rows | bytes | median ms | × control |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, r] of results) {
  console.log(`| ${name} | ${r.rows} | ${r.bytes} | ${r.ms.toFixed(2)} | ${(r.ms / control).toFixed(1)} |`);
}
console.log(`\ncontrol at start ${control1.ms.toFixed(3)} ms, at end ${control2.ms.toFixed(3)} ms`);
await app.close();
await database.close();
await dataset.close();
