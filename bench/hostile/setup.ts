import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { openAndMigrate } from '../../src/db/index.js';
import { importDocument } from '../../src/document/import.js';
import { parseDocument } from '../../src/document/parse.js';
import { mintKey } from '../../src/auth/key-service.js';
import { FileMediaStore } from '../../src/media/store.js';

/*
 * The hostile-input benches share this: a demo production on a fresh database, the keys a
 * hostile vendor and a storage agent would hold, and a real server process whose memory is
 * read from /proc while requests run.
 */

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const DEMO = resolve('demo/episodic/production.yaml');

export interface Stage {
  db: string;
  media: string;
  /** Engagement-bound (eng-pixel), read only. */
  vendorKey: string;
  /** Production-wide: read, write, admin. */
  wideKey: string;
}

/** A fresh database holding the episodic demo (`db`: a SQLite path or a PostgreSQL URL). */
export async function stage(db?: string): Promise<Stage> {
  const dir = await mkdtemp(join(tmpdir(), 'prodgraph-hostile-'));
  const config = loadConfig({ db: db ?? join(dir, 'bench.db'), media: join(dir, 'media') });
  const handle = await openAndMigrate(config.db);
  try {
    const store = new FileMediaStore(config.mediaDir);
    await importDocument(handle.db, parseDocument(await readFile(DEMO, 'utf8')), {
      store,
      baseDir: dirname(DEMO),
    });
    const vendor = await mintKey(handle.db, {
      production: 'nightfall',
      label: 'hostile vendor',
      engagement: 'eng-pixel',
      scopes: ['read'],
    });
    const wide = await mintKey(handle.db, {
      production: 'nightfall',
      label: 'storage agent',
      scopes: ['read', 'write', 'admin'],
    });
    return {
      db: config.db.dialect === 'sqlite' ? config.db.path : config.db.url,
      media: config.mediaDir,
      vendorKey: vendor.token,
      wideKey: wide.token,
    };
  } finally {
    await handle.close();
  }
}

export interface Served {
  child: ChildProcess;
  url: string;
  /** Resident set of the server process now, in MiB (from /proc). */
  rssMb(): Promise<number>;
  stop(): Promise<void>;
}

/** `prodgraph serve` as an operator runs it, on `port`. */
export async function serve(s: Stage, port: number, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'serve', '--db', s.db, '--media', s.media, '--port', String(port)],
    {
      env: { ...process.env, PRODGRAPH_LOG_LEVEL: 'warn', PRODGRAPH_RATE_LIMIT: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // a bench that fails never leaves its server behind
  process.once('exit', () => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if (child.exitCode === null && (await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    async rssMb() {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    },
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * While `work` runs: a probe asks `/healthz` every 10 ms (the longest answer is how long the
 * event loop was held) and the server's RSS is sampled every 20 ms.
 */
export async function underWatch<T>(
  served: Served,
  work: () => Promise<T>,
): Promise<{ result: T; ms: number; longestProbeMs: number; failedProbes: number; peakRssMb: number }> {
  let running = true;
  let longestProbeMs = 0;
  let failedProbes = 0;
  let peakRssMb = await served.rssMb();
  const probe = (async () => {
    while (running) {
      const t = performance.now();
      await fetch(`${served.url}/healthz`)
        .then((r) => r.arrayBuffer())
        .catch(() => failedProbes++);
      longestProbeMs = Math.max(longestProbeMs, performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const sampler = (async () => {
    while (running) {
      peakRssMb = Math.max(peakRssMb, await served.rssMb().catch(() => 0));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const t = performance.now();
  const result = await work();
  const ms = performance.now() - t;
  await new Promise((r) => setTimeout(r, 200));
  running = false;
  await Promise.all([probe, sampler]);
  return { result, ms, longestProbeMs, failedProbes, peakRssMb };
}

export const round = (n: number, places = 1): number => Number(n.toFixed(places));
