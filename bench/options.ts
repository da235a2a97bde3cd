import { parseArgs } from 'node:util';
import { wrkInstalled } from './wrk.js';

export interface BenchOptions {
  scale: number;
  seed: number;
  /** Seconds of measurement per route. */
  duration: number;
  /** Seconds of unmeasured load per route before it is measured. */
  warmup: number;
  connections: number;
  /** PostgreSQL server URL; the bench creates (and drops) a database of its own there. */
  pg: string | null;
  /** Route names to measure (the control always runs); empty = all. */
  only: string[];
  /** Run ANALYZE on the working copy before serving (the product does not, yet). */
  analyze: boolean;
  /** After the load, explain and time every statement of the hot routes, before and after ANALYZE. */
  plans: boolean;
  /** Write a V8 CPU profile of the server into bench/.cache/profiles. */
  cpuProf: boolean;
  /** Log level of the measured server; the product's default is info. */
  logLevel: string;
  /** Keep the results in bench/results/ (off for quick experiments). */
  save: boolean;
  /** Seconds of the mixed soak after the routes (0: none). */
  soak: number;
  /** The load generator of the read routes (writes always use autocannon). */
  loader: 'wrk' | 'autocannon';
  /** Worker counts of `serve --workers N` measured after the routes (empty: none). */
  workers: number[];
}

export const USAGE = `usage: npm run bench -- [options]

  --scale N         size of the generated production (default 1: 3,000 scenes, 30,000 assets)
  --seed S          generator seed (default 1)
  --duration S      seconds measured per route (default 10)
  --warmup S        seconds of load before each measurement (default 3)
  --connections N   concurrent connections for the read routes (default 50)
  --pg URL          run on PostgreSQL: a database is created at URL's server and dropped after
  --only a,b        measure only these routes (names as in the table; the control always runs)
  --analyze         ANALYZE the database before serving (shows what statistics change)
  --plans           after the load, write the hot routes' query plans (before/after ANALYZE)
  --cpu-prof        write a CPU profile of the server to bench/.cache/profiles/
  --log-level L     the server's log level (default info, as the product)
  --soak S          seconds of the mixed soak after the routes (default 600; 0 skips it)
  --load L          load generator of the read routes: wrk (default when installed) or autocannon
  --workers LIST    worker counts of \`serve --workers N\` to measure, unpinned, with wrk
                    (default 1,2; 0 skips; needs wrk)
  --no-save         print the table but keep bench/results/ as it is`;

export class BenchUsageError extends Error {}

function number(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new BenchUsageError(`--${name}: "${raw}" is not a number from ${min} to ${max}`);
  }
  return n;
}

function loaderOf(raw: string | undefined): 'wrk' | 'autocannon' {
  if (raw === undefined) return wrkInstalled() ? 'wrk' : 'autocannon';
  if (raw !== 'wrk' && raw !== 'autocannon')
    throw new BenchUsageError(`--load: "${raw}" is not wrk or autocannon`);
  if (raw === 'wrk' && !wrkInstalled())
    throw new BenchUsageError('--load wrk: wrk is not installed (apt-get install wrk)');
  return raw;
}

function workersOf(raw: string | undefined): number[] {
  if (raw === '0') return [];
  const counts = (raw ?? '1,2').split(',').map((s) => number('workers', s.trim(), 1, 1, 64));
  if (!wrkInstalled()) {
    if (raw === undefined) return [];
    throw new BenchUsageError('--workers: wrk is not installed (apt-get install wrk)');
  }
  return counts.map(Math.trunc);
}

export function parseBenchOptions(argv: string[]): BenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        scale: { type: 'string' },
        seed: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string' },
        pg: { type: 'string' },
        only: { type: 'string' },
        analyze: { type: 'boolean' },
        plans: { type: 'boolean' },
        'cpu-prof': { type: 'boolean' },
        'log-level': { type: 'string' },
        'no-save': { type: 'boolean' },
        soak: { type: 'string' },
        load: { type: 'string' },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new BenchUsageError((err as Error).message);
  }
  if (values.help) throw new BenchUsageError(USAGE);
  if (values.pg !== undefined && !/^postgres(ql)?:\/\//.test(values.pg)) {
    throw new BenchUsageError(`--pg: "${values.pg}" is not a postgres:// URL`);
  }
  return {
    scale: number('scale', values.scale, 1, 0.0001, 10),
    seed: Math.trunc(number('seed', values.seed, 1, 0, 0x7fffffff)),
    duration: number('duration', values.duration, 10, 1, 600),
    warmup: number('warmup', values.warmup, 3, 0, 120),
    connections: Math.trunc(number('connections', values.connections, 50, 1, 1000)),
    pg: values.pg ?? null,
    only: values.only
      ? values.only
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [],
    analyze: values.analyze ?? false,
    plans: values.plans ?? false,
    cpuProf: values['cpu-prof'] ?? false,
    logLevel: values['log-level'] ?? 'info',
    save: !(values['no-save'] ?? false),
    soak: Math.trunc(number('soak', values.soak, 600, 0, 86_400)),
    loader: loaderOf(values.load),
    workers: workersOf(values.workers),
  };
}
