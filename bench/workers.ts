import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dataset } from './dataset.js';
import type { BenchOptions } from './options.js';
import { fmt } from './report.js';
import { ROUTES, type Prepared } from './routes.js';
import { runWrk, type ReadPlan } from './wrk.js';

/**
 * `prodgraph serve --workers N` as users run it (`node dist/cli.js serve`), for each N asked.
 * Nothing is pinned here: the server's processes and wrk share every core, as they would on a
 * machine that serves and is loaded from itself. On two cores that is the honest figure the
 * question asks for; what N cores would give is said in bench/FINDINGS.md, not guessed here.
 * The bare Fastify control is measured the same way (unpinned, one process) so every figure
 * has its ratio in the same conditions.
 */

/** The reads measured per worker count: a kept answer, a kept bundle, a vendor's bundle. */
const MEASURED = ['production', 'scene-bundle', 'scene-bundle-vendor'] as const;

export interface WorkersRow {
  workers: number;
  route: string;
  label: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
}

export interface WorkersResult {
  bare: number;
  rows: WorkersRow[];
}

/**
 * On every core: the bench process pins itself (and so everything it starts) to the load core;
 * here the server's processes and wrk get the whole machine back.
 */
const hasTaskset = spawnSync('taskset', ['--version']).status === 0;
const unpinned = (argv: string[]) =>
  hasTaskset ? ['taskset', '-c', `0-${cpus().length - 1}`, ...argv] : argv;

function start(argv: string[], options: SpawnOptions): ChildProcess {
  const [command, ...args] = unpinned(argv);
  return spawn(command!, args, options);
}

/** Until `prodgraph serve` on `port` answers /healthz 200 (polled every `pollMs`); 120 s at most. */
export async function waitHealthy(port: number, child: ChildProcess, pollMs = 50): Promise<void> {
  const until = performance.now() + 120_000;
  while (performance.now() < until) {
    if (child.exitCode !== null) throw new Error(`prodgraph serve exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await sleep(pollMs);
  }
  throw new Error('prodgraph serve did not become ready in 120 s');
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await Promise.race([once(child, 'exit'), sleep(30_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** `node dist/cli.js serve --workers N` on the bench's working copy, ready to be loaded. */
async function startProduct(root: string, dataset: Dataset, workers: number, port: number) {
  const child = start(
    [
      process.execPath,
      join(root, 'dist', 'cli.js'),
      'serve',
      '--db',
      dataset.db,
      '--media',
      dataset.media,
      '--port',
      String(port),
      '--workers',
      String(workers),
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        PRODGRAPH_LOG_LEVEL: 'info',
        PRODGRAPH_RATE_LIMIT: process.env.PRODGRAPH_RATE_LIMIT ?? '1000000',
        PRODGRAPH_RATE_LIMIT_WINDOW_MS: process.env.PRODGRAPH_RATE_LIMIT_WINDOW_MS ?? '1000',
      },
    },
  );
  await waitHealthy(port, child);
  // every worker listening, not only the first: the primary forks them together
  await sleep(1500);
  return child;
}

async function startBare(benchDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = start([process.execPath, '--import', 'tsx', join(benchDir, 'bare-child.ts')], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`the bare control exited (${code})`)));
  });
  return { child, port };
}

async function loadOnce(base: string, plan: ReadPlan, options: BenchOptions) {
  const run = (seconds: number) =>
    runWrk(base, plan, { connections: options.connections, seconds, pin: unpinned });
  if (options.warmup > 0) await run(options.warmup);
  return run(options.duration);
}

export async function measureWorkers(
  paths: { root: string; benchDir: string },
  dataset: Dataset,
  prepared: Prepared,
  options: BenchOptions,
  freePort: () => Promise<number>,
  log: (line: string) => void,
): Promise<WorkersResult> {
  log('workers: the bare Fastify control, unpinned');
  const bare = await startBare(paths.benchDir);
  let bareRate: number;
  try {
    const r = await loadOnce(`http://127.0.0.1:${bare.port}`, { paths: ['/hello'], headers: {} }, options);
    bareRate = r.requests / r.seconds;
  } finally {
    bare.child.send({ type: 'stop' });
    await Promise.race([once(bare.child, 'exit'), sleep(10_000)]);
  }
  const rows: WorkersRow[] = [];
  for (const workers of options.workers) {
    const port = await freePort();
    log(`workers: prodgraph serve --workers ${workers}`);
    const child = await startProduct(paths.root, dataset, workers, port);
    try {
      for (const name of MEASURED) {
        const spec = ROUTES.find((r) => r.name === name)!;
        const r = await loadOnce(`http://127.0.0.1:${port}`, spec.plan!(prepared), options);
        rows.push({
          workers,
          route: name,
          label: spec.label(prepared),
          reqPerSec: r.requests / r.seconds,
          p50Ms: r.p50Ms,
          p99Ms: r.p99Ms,
          failed: r.failed + r.socketErrors,
        });
      }
    } finally {
      await stop(child);
    }
  }
  return { bare: bareRate, rows };
}

/** The workers table: req/s per worker count, each as a ratio to one worker and to bare Fastify. */
export function workersLines(result: WorkersResult): string[] {
  const one = new Map(result.rows.filter((r) => r.workers === 1).map((r) => [r.route, r.reqPerSec]));
  return [
    '',
    `### \`serve --workers N\` (nothing pinned: server processes and wrk share the cores)`,
    '',
    `Bare Fastify, one process, measured the same way: ${fmt(result.bare)} req/s.`,
    '',
    '| route | workers | req/s | p50 ms | p99 ms | ratio to 1 worker | ratio to bare Fastify | |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...result.rows.map((r) => {
      const base = one.get(r.route);
      return `| ${r.label} | ${r.workers} | ${fmt(r.reqPerSec)} | ${fmt(r.p50Ms, 1)} | ${fmt(r.p99Ms, 1)} | ${base ? fmt(r.reqPerSec / base, 2) : '—'} | ${fmt(r.reqPerSec / result.bare, 3)} | ${r.failed ? `${r.failed} failed` : ''} |`;
    }),
  ];
}
