import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { parseDbTarget } from '../src/config.js';
import { openDatabase } from '../src/db/index.js';
import { BENCH_DIR, CACHE_DIR, prepareDataset, type Dataset } from './dataset.js';
import type { GcPauses } from './gc-pauses.js';
import { prepareFixture } from './fixture.js';
import { BenchUsageError, parseBenchOptions, type BenchOptions } from './options.js';
import { describeMachine, markdown, type BenchReport, type RouteResult } from './report.js';
import { queryPlans } from './plans.js';
import { requestsOf, ROUTES, type Prepared, type RouteSpec } from './routes.js';
import { runWrk } from './wrk.js';
import { runSoak, type SoakResult } from './soak.js';
import { measureWorkers, waitHealthy, type WorkersResult } from './workers.js';

/** What the server reports after each route. */
interface RouteStats {
  rssMb: number;
  peakRssMb: number;
  gcPauses: GcPauses;
}

const ROOT = join(BENCH_DIR, '..');
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

/**
 * Where the machine has two cores or more and `taskset` exists, the server runs on core 0 and
 * this process (the load generator) on core 1, so neither steals the other's CPU.
 */
const canPin = cpus().length >= 2 && spawnSync('taskset', ['--version']).status === 0;
const onCore = (core: number, argv: string[]) => (canPin ? ['taskset', '-c', String(core), ...argv] : argv);

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/** `dist/` is what `prodgraph serve` runs: rebuild it when any source file is newer. */
async function ensureBuilt(): Promise<void> {
  const cli = join(ROOT, 'dist', 'cli.js');
  const built = await stat(cli).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built >= (await newestMtime(join(ROOT, 'src')))) return;
  log('dist/ is older than src/: npm run build');
  const res = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (res.status !== 0) throw new Error('npm run build failed');
}

/**
 * Start to ready of the product as users run it: `node dist/cli.js serve`, from spawn until
 * /healthz answers 200 (the database open and migrated). The median of three starts.
 */
async function startToReady(dataset: Dataset): Promise<number> {
  await ensureBuilt();
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const argv = onCore(0, [
      process.execPath,
      join(ROOT, 'dist', 'cli.js'),
      'serve',
      '--db',
      dataset.db,
      '--media',
      dataset.media,
      '--port',
      String(port),
    ]);
    const started = performance.now();
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: 'ignore',
      env: { ...process.env, PRODGRAPH_LOG_LEVEL: 'warn' },
    });
    try {
      await waitHealthy(port, child, 10);
      times.push(performance.now() - started);
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
  }
  return times.sort((a, b) => a - b)[1]!;
}

interface Server {
  child: ChildProcess;
  port: number;
  readyMs: number;
  request<T>(type: string): Promise<T>;
}

async function startServer(dataset: Dataset, options: BenchOptions): Promise<Server> {
  const profiles = join(CACHE_DIR, 'profiles');
  if (options.cpuProf) await mkdir(profiles, { recursive: true });
  const argv = onCore(0, [
    process.execPath,
    ...(options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []),
    // the soak reports the heap after a full GC
    '--expose-gc',
    '--import',
    'tsx',
    join(BENCH_DIR, 'server-child.ts'),
  ]);
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env,
      BENCH_DB: dataset.db,
      BENCH_MEDIA: dataset.media,
      PRODGRAPH_LOG_LEVEL: options.logLevel,
      // counted as in production (the hooks run), but high enough never to refuse the load
      PRODGRAPH_RATE_LIMIT: process.env.PRODGRAPH_RATE_LIMIT ?? '1000000',
      PRODGRAPH_RATE_LIMIT_WINDOW_MS: process.env.PRODGRAPH_RATE_LIMIT_WINDOW_MS ?? '1000',
    },
  });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type: string }) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`the bench server exited (${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ready = await next<{ port: number; sinceProcessStartMs: number }>('ready');
  return {
    child,
    port: ready.port,
    readyMs: ready.sinceProcessStartMs,
    request: <T>(type: string) => {
      const reply = next<T>(type);
      child.send({ type });
      return reply;
    },
  };
}

/** The bare control in a process of its own, on the server's core (the product sits idle meanwhile). */
async function startBare(): Promise<Server> {
  const argv = onCore(0, [process.execPath, '--import', 'tsx', join(BENCH_DIR, 'bare-child.ts')]);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const ready = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (m: { type: string; port: number }) => resolve(m));
    child.once('exit', (code) => reject(new Error(`the bare control exited (${code})`)));
  });
  return { child, port: ready.port, readyMs: 0, request: () => Promise.reject(new Error('no requests')) };
}

const BARE: RouteSpec = {
  name: 'bare',
  label: () => 'bare Fastify hello-world (no logger, no hooks, own process)',
  kind: 'control',
  expect: 200,
  plan: () => ({ paths: ['/hello'], headers: {} }),
};

/** The bare control measured once: started, loaded exactly as a route, stopped. */
async function measureBare(prepared: Prepared, options: BenchOptions): Promise<RouteResult> {
  const bare = await startBare();
  try {
    return await measure(`http://127.0.0.1:${bare.port}`, BARE, prepared, options);
  } finally {
    await stopServer(bare);
  }
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  server.child.send({ type: 'stop' });
  await Promise.race([once(server.child, 'exit'), sleep(30_000)]);
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
}

/** Every scene bundle's current ETag (and a check that the fixture's scenes answer 200). */
async function sceneEtags(
  base: string,
  prepared: Omit<Prepared, 'sceneEtags'>,
): Promise<Map<number, string>> {
  const tags = new Map<number, string>();
  for (const id of prepared.fixture.scenes) {
    const res = await fetch(`${base}/api/v1/bundles/scene/${id}`, {
      headers: { authorization: `Bearer ${prepared.fixture.wideKey}` },
    });
    if (res.status !== 200) throw new Error(`scene bundle ${id} answered ${res.status}`);
    tags.set(id, res.headers.get('etag')!);
    await res.arrayBuffer();
  }
  return tags;
}

/**
 * Waits until the server has worked off what the last route left queued (requests already
 * received keep running after the load generator stops): the control must answer three times
 * in a row within 20 ms. Without this a slow route's backlog is charged to the next one.
 */
async function drain(base: string, path = '/bench/hello'): Promise<void> {
  const until = performance.now() + 60_000;
  let quick = 0;
  while (quick < 3 && performance.now() < until) {
    const started = performance.now();
    await fetch(`${base}${path}`).then((r) => r.arrayBuffer());
    quick = performance.now() - started < 20 ? quick + 1 : 0;
  }
}

/** One measurement of a route: wrk for a read when chosen, autocannon otherwise. */
async function load(
  base: string,
  spec: RouteSpec,
  prepared: Prepared,
  options: BenchOptions,
  seconds: number,
): Promise<Omit<RouteResult, 'name' | 'label' | 'kind' | 'ratio' | 'ratioToBare' | 'expected'>> {
  const connections = spec.connections ?? options.connections;
  if (options.loader === 'wrk' && spec.plan) {
    const r = await runWrk(base, spec.plan(prepared), {
      connections,
      seconds,
      pin: (argv) => onCore(1, argv),
    });
    return {
      connections,
      requests: r.requests,
      reqPerSec: r.requests / r.seconds,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      // wrk counts answers that are neither 2xx nor 3xx; every expected status here is one of those
      statuses: { [spec.expect]: r.requests - r.failed, ...(r.failed ? { other: r.failed } : {}) },
      errors: r.socketErrors,
      timeouts: 0,
      loader: 'wrk',
    };
  }
  let repeated = 0;
  const count = spec.repeated;
  const requests = requestsOf(spec, prepared).map((req) =>
    count
      ? {
          ...req,
          onResponse: (status: number, body: string, _ctx: object, headers?: IncomingHttpHeaders) => {
            if (status === spec.expect) repeated += count(body, headers ?? {});
          },
        }
      : req,
  );
  const r = await autocannon({ url: base, connections, duration: seconds, timeout: 30, requests });
  return {
    ...(count ? { repeated } : {}),
    connections,
    requests: r.requests.total,
    reqPerSec: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    statuses: Object.fromEntries(
      Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
    ),
    errors: r.errors,
    timeouts: r.timeouts,
    loader: 'autocannon',
  };
}

async function measure(
  base: string,
  spec: RouteSpec,
  prepared: Prepared,
  options: BenchOptions,
): Promise<RouteResult> {
  const idle = spec === BARE ? '/hello' : '/bench/hello';
  if (options.warmup > 0) {
    await load(base, spec, prepared, options, options.warmup);
    await drain(base, idle);
  }
  const r = await load(base, spec, prepared, options, options.duration);
  await drain(base, idle);
  return {
    name: spec.name,
    label: spec.label(prepared),
    kind: spec.kind,
    ...r,
    ratio: 0,
    ratioToBare: 0,
    ...(spec.items
      ? { itemsPerSec: { value: r.reqPerSec * spec.items.perRequest, unit: spec.items.unit } }
      : {}),
    expected: spec.expect,
  };
}

async function databaseVersion(dataset: Dataset): Promise<string> {
  const handle = openDatabase(parseDbTarget(dataset.db));
  try {
    if (dataset.dialect === 'sqlite') {
      const { rows } = await sql<{ v: string }>`select sqlite_version() as v`.execute(handle.db);
      return `SQLite ${rows[0]!.v}`;
    }
    const { rows } = await sql<{ v: string }>`show server_version`.execute(handle.db);
    return `PostgreSQL ${Object.values(rows[0]!)[0]}`;
  } finally {
    await handle.close();
  }
}

async function main(): Promise<void> {
  const options = parseBenchOptions(process.argv.slice(2));
  const unknown = options.only.filter((n) => !ROUTES.some((r) => r.name === n));
  if (unknown.length) {
    throw new BenchUsageError(
      `--only: unknown route ${unknown.join(', ')} (routes: ${ROUTES.map((r) => r.name).join(', ')})`,
    );
  }
  if (canPin) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)], { stdio: 'ignore' });
  else log('fewer than two cores or no taskset: server and load share the CPU, ratios still hold');
  const loadBefore = loadavg();
  await mkdir(CACHE_DIR, { recursive: true });

  const dataset = await prepareDataset(options);
  let server: Server | null = null;
  // an interrupted run still drops its PostgreSQL database and its working copy
  process.once('SIGINT', () => {
    server?.child.kill('SIGTERM');
    void dataset.close().finally(() => process.exit(130));
  });
  try {
    const fixture = await prepareFixture(dataset.db, options);
    const database = await databaseVersion(dataset);
    log('measuring start to ready of `prodgraph serve`');
    const ready = await startToReady(dataset);
    server = await startServer(dataset, options);
    const benchServerReadyMs = server.readyMs;
    const base = `http://127.0.0.1:${server.port}`;
    const control = ROUTES.find((r) => r.kind === 'control')!;
    const chosen = ROUTES.filter(
      (r) => r.kind !== 'control' && (options.only.length === 0 || options.only.includes(r.name)),
    );
    const partial = { fixture, runId: randomBytes(4).toString('hex') };
    // the 304 route needs every scene's current ETag: fetched only when it is measured
    const prepared: Prepared = {
      ...partial,
      sceneEtags: chosen.some((r) => r.name === 'scene-bundle-304')
        ? await sceneEtags(base, partial)
        : new Map(),
    };
    const results: RouteResult[] = [];
    log('measuring the bare Fastify control');
    const bareFirst = await measureBare(prepared, options);
    log(`measuring ${control.name}`);
    const first = await measure(base, control, prepared, options);
    // each route's figures start here: the collector's pauses so far belong to the controls
    await server.request('stats');
    for (const spec of chosen) {
      log(`measuring ${spec.name}`);
      const result = await measure(base, spec, prepared, options);
      const { rssMb, peakRssMb, gcPauses } = await server.request<RouteStats>('stats');
      results.push({ ...result, serverMemory: { rssMb, peakRssMb }, gcPauses });
    }
    log(`measuring ${control.name} again`);
    const last = await measure(base, control, prepared, options);
    log('measuring the bare Fastify control again');
    const bareLast = await measureBare(prepared, options);
    const controlRate = (first.reqPerSec + last.reqPerSec) / 2;
    const bareRate = (bareFirst.reqPerSec + bareLast.reqPerSec) / 2;
    let soak: SoakResult | undefined;
    if (options.soak > 0) {
      log(`mixed soak, ${options.soak} s`);
      const live = server;
      soak = await runSoak(base, prepared, options.soak, () => live.request('sample'), log);
    }
    const stats = await server.request<{ peakRssMb: number }>('stats');
    await stopServer(server);
    server = null;
    let workers: WorkersResult | undefined;
    if (options.workers.length) {
      workers = await measureWorkers(
        { root: ROOT, benchDir: BENCH_DIR },
        dataset,
        prepared,
        options,
        freePort,
        log,
      );
    }

    const report: BenchReport = {
      date: new Date().toISOString(),
      dialect: dataset.dialect,
      options: { ...options, pg: options.pg ? '(given)' : null },
      machine: describeMachine(
        database,
        canPin ? 'server on core 0, load on core 1' : 'not pinned',
        loadBefore,
      ),
      dataset: {
        scale: options.scale,
        seed: options.seed,
        documentMb: dataset.documentMb,
        importSeconds: dataset.import.ms / 1000,
        importPeakRssMb: dataset.import.peakRssMb,
        importWhen: dataset.import.when === 'cached' ? 'cached from an earlier run' : 'this run',
      },
      server: {
        startToReadyMs: Math.round(ready),
        startToReadyNote: '`node dist/cli.js serve` until /healthz answers, median of 3',
        benchServerReadyMs,
        peakRssMb: stats.peakRssMb,
      },
      control: { first: first.reqPerSec, last: last.reqPerSec },
      bare: { first: bareFirst.reqPerSec, last: bareLast.reqPerSec },
      routes: [{ ...bareFirst, reqPerSec: bareRate }, { ...first, reqPerSec: controlRate }, ...results].map(
        (r) => ({
          ...r,
          ratio: r.reqPerSec / controlRate,
          ratioToBare: r.reqPerSec / bareRate,
        }),
      ),
      ...(soak ? { soak: { ...soak, ratioToBare: soak.reqPerSec / bareRate } } : {}),
      ...(workers ? { workers } : {}),
    };
    const text = markdown(report);
    process.stdout.write(`${text}\n`);
    const dir = options.save ? join(BENCH_DIR, 'results') : CACHE_DIR;
    await mkdir(dir, { recursive: true });
    if (options.save) {
      await writeFile(join(dir, `${dataset.dialect}.json`), `${JSON.stringify(report, null, 2)}\n`);
      await writeFile(join(dir, `${dataset.dialect}.md`), text);
      log(`kept in bench/results/${dataset.dialect}.{md,json}`);
    }
    if (options.plans) {
      log('explaining the hot routes’ queries (as imported, then after ANALYZE)');
      const file = join(dir, `plans-${dataset.dialect}.md`);
      await writeFile(file, await queryPlans(dataset, fixture));
      log(`query plans in ${file}`);
    }
  } finally {
    if (server) await stopServer(server);
    await dataset.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
