/*
 * The console's time to first render (navigation start → the first page showing its data, the
 * `console:first-render` mark) in Debian's Chromium against a real server, on the demo and on a
 * generated production (scale 1: about 3,000 scenes and 30,000 assets), with the page weight.
 * The demo is the control: each page's median at scale is also given as a ratio to the same
 * page on the demo in the same run. SQLite (the generated database is imported once and cached
 * by bench/dataset.ts).
 *
 *   node --import tsx bench/console.ts [--scale 1] [--rounds 7]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig, parseDbTarget } from '../src/config.js';
import { openAndMigrate } from '../src/db/index.js';
import { importDocument } from '../src/document/import.js';
import { readDocument } from '../src/document/parse.js';
import { mintKey } from '../src/auth/key-service.js';
import { FileMediaStore } from '../src/media/store.js';
import { CONSOLE_DIR } from '../src/modules/console/files.js';
import { launch } from '../test/browser/browser.js';
import { prepareDataset } from './dataset.js';

const { values } = parseArgs({
  options: { scale: { type: 'string', default: '1' }, rounds: { type: 'string', default: '7' } },
});
const scale = Number(values.scale);
const rounds = Number(values.rounds);
const PAGES = ['overview', 'scenes', 'assets', 'vendors'];
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

interface Target {
  name: string;
  db: string;
  media: string;
  production: string;
  close(): Promise<void>;
}

async function demoTarget(): Promise<Target> {
  const dir = await mkdtemp(join(tmpdir(), 'prodgraph-console-bench-'));
  const file = join(import.meta.dirname, '..', 'demo', 'episodic', 'production.yaml');
  const handle = await openAndMigrate(parseDbTarget(`sqlite:${join(dir, 'demo.db')}`));
  await importDocument(handle.db, await readDocument(file), {
    store: new FileMediaStore(join(dir, 'media')),
    baseDir: dirname(file),
  });
  await handle.close();
  return {
    name: 'demo (nightfall)',
    db: `sqlite:${join(dir, 'demo.db')}`,
    media: join(dir, 'media'),
    production: 'nightfall',
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

async function scaleTarget(): Promise<Target> {
  const dataset = await prepareDataset({
    scale,
    seed: 1,
    duration: 0,
    warmup: 0,
    connections: 1,
    pg: null,
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
  const handle = await openAndMigrate(parseDbTarget(dataset.db));
  const row = await handle.db.selectFrom('productions').select('code').executeTakeFirstOrThrow();
  await handle.close();
  return {
    name: `scale ${scale}`,
    db: dataset.db,
    media: dataset.media,
    production: row.code,
    close: () => dataset.close(),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median time to first render of each page, each a fresh tab with the key already in its sessionStorage. */
async function measure(target: Target): Promise<Record<string, number>> {
  const config = loadConfig({ db: target.db, media: target.media }, { PRODGRAPH_LOG_LEVEL: 'silent' });
  const handle = await openAndMigrate(config.db);
  const key = (
    await mintKey(handle.db, { production: target.production, label: 'bench', scopes: ['read', 'admin'] })
  ).token;
  const app = await buildApp({ config, database: handle, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const profile = await mkdtemp(join(tmpdir(), 'prodgraph-chromium-'));
  const browser = await launch(profile);
  const out: Record<string, number> = {};
  try {
    for (const name of PAGES) {
      const times: number[] = [];
      for (let i = 0; i <= rounds; i++) {
        const page = await browser.newPage();
        await page.addInitScript(`sessionStorage.setItem('prodgraph.console.key', ${JSON.stringify(key)})`);
        await page.goto(`${base}/console#/${name}`);
        // a function, not a string: the page's CSP (rightly) forbids eval
        await page.waitForFunction(
          () => performance.getEntriesByName('console:first-render').length > 0,
          null,
          {
            timeout: 120_000,
          },
        );
        const at = await page.evaluate<number>(
          "performance.getEntriesByName('console:first-render')[0].startTime",
        );
        // the first round warms the server's caches and the browser's: not counted
        if (i > 0) times.push(at);
        await page.close();
      }
      out[name] = median(times);
      log(`${target.name} ${name}: ${out[name].toFixed(0)} ms (median of ${rounds})`);
    }
  } finally {
    await browser.close();
    await rm(profile, { recursive: true, force: true });
    await app.close();
    await handle.close();
  }
  return out;
}

const manifest = JSON.parse(await readFile(join(CONSOLE_DIR, 'manifest.json'), 'utf8')) as {
  bytes: number;
  gzip: number;
};
const demo = await demoTarget();
const big = await scaleTarget();
try {
  const control = await measure(demo);
  const scaled = await measure(big);
  console.log(
    `page weight: ${manifest.bytes} bytes, ${manifest.gzip} gzipped (index.html, script, stylesheet, icon)`,
  );
  console.log(`rounds: ${rounds} per page (after one warm-up), SQLite, median ms from navigation start`);
  console.log(`| page | ${demo.name} | ${big.name} | ratio |`);
  console.log('|---|---:|---:|---:|');
  for (const name of PAGES) {
    const a = control[name]!;
    const b = scaled[name]!;
    console.log(`| ${name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)} |`);
  }
} finally {
  await demo.close();
  await big.close();
}
