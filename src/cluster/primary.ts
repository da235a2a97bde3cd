import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config.js';
import { openAndMigrate } from '../db/index.js';
import { loggerOptions } from '../http/logging.js';
import { closeScrapeListener, openScrapeListener } from '../metrics/listener.js';
import { recoverStaged } from '../media/recovery.js';
import { FileMediaStore } from '../media/store.js';
import { reportServing } from '../ops/start-report.js';
import { ensureSecret } from '../auth/signing-repository.js';
import { isOurs, type FromWorker, type MetricsAnswer, type RateAnswer } from './messages.js';
import { RateWindows } from './rate-limits.js';
import { WORKER_ID } from './worker.js';

type Log = ReturnType<typeof pino>;

/** A worker that dies sooner than this after it started is not restarted in a loop, but after a pause. */
const QUICK_DEATH_MS = 10_000;
const RESTART_PAUSE_MS = 2_000;

/**
 * Before any worker starts, once: the database migrated (workers then find it current and never
 * race to migrate), the staged files of writes a crash interrupted settled (a worker restarted
 * later must not touch its siblings' staged files), and one line saying what is served.
 */
async function prepare(config: Config, log: Log): Promise<void> {
  const database = await openAndMigrate(config.db, { connectTimeoutMs: config.dbConnectTimeoutMs });
  try {
    const store = new FileMediaStore(config.mediaDir);
    const settled = await recoverStaged(database.db, store);
    if (settled.placed || settled.removed) log.info(settled, 'settled staged media of interrupted writes');
    // the first secret, made before the workers race to make it, so the line below can name it
    if (!config.ticketSecret) await ensureSecret(database.db);
    await reportServing(log, database.db, config);
  } finally {
    await database.close();
  }
}

/**
 * The primary of `serve --workers N`: forks N workers that share the listening port (Node's
 * cluster hands each connection to one of them), and keeps what they must share: the
 * rate-limit windows (SQLite; on PostgreSQL the database keeps them), commit news between
 * siblings on SQLite (so a long-poll in one wakes on a write in another at once; PostgreSQL
 * announces commits to every process itself), and the server's metrics summed over the
 * workers. Media tickets need nothing of it: every worker signs with the database's secret (or
 * the configured one).
 * A worker that dies is replaced; SIGINT/SIGTERM stop every worker gracefully, then the primary.
 */
export async function servePrimary(config: Config): Promise<void> {
  const log: Log = pino(loggerOptions(config.logLevel));
  await prepare(config, log);
  const env = { PRODGRAPH_WORKERS: '1' };
  const pool = new WorkerPool(config, log, env);
  // the scrape listener answers every worker's metrics, summed as each metric declares
  const scrape = config.metricsListener ? await openScrapeListener(config.metricsListener, pool, log) : null;
  const stop = (signal: string) => {
    log.info({ signal }, `shutting down: stopping ${pool.size} workers`);
    // SIGTERM (a service manager, a rolling restart) drains; SIGINT (someone at a terminal) does not
    pool.stopAll(signal === 'SIGTERM').then(
      (ok) => {
        if (scrape) void closeScrapeListener(scrape);
        log.info(ok ? 'shut down cleanly' : 'shut down; a worker failed to stop cleanly');
        process.exit(ok ? 0 : 1);
      },
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  await pool.start(config.workers);
  log.info(`serving with ${config.workers} workers at http://${config.host}:${config.port}`);
}

/** The worker pool of a primary: its workers, numbered 1…N, each replaced when it dies. */
class WorkerPool {
  private readonly workers = new Map<number, { worker: Worker; started: number }>();
  private readonly windows = new RateWindows();
  private readonly aggregator = new AggregatorRegistry();
  private stopping = false;

  constructor(
    private readonly config: Config,
    private readonly log: Log,
    private readonly env: Record<string, string>,
  ) {}

  get size(): number {
    return this.workers.size;
  }

  /** Forks n workers; resolves once each listens, rejects if one dies before it does. */
  async start(n: number): Promise<void> {
    await Promise.all(Array.from({ length: n }, (_, i) => this.fork(i + 1)));
  }

  private fork(id: number): Promise<void> {
    const worker = cluster.fork({ ...this.env, [WORKER_ID]: String(id) });
    this.workers.set(id, { worker, started: Date.now() });
    worker.on('message', (message: unknown) => {
      if (isOurs(message)) this.heard(worker, message as FromWorker);
    });
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (m: unknown) => {
        if (isOurs(m) && m.prodgraph === 'ready' && !ready) {
          ready = true;
          resolve();
        }
      });
      worker.on('exit', (code, signal) => {
        const started = this.workers.get(id)?.started ?? 0;
        this.workers.delete(id);
        if (!ready) {
          reject(new Error(`worker ${id} exited before it served (${signal ?? `code ${code}`})`));
          return;
        }
        this.died(id, code, signal, started);
      });
    });
  }

  /** `started`: when the dead worker was forked (read before its entry left the map). */
  private died(id: number, code: number | null, signal: string | null, started: number): void {
    if (this.stopping) return;
    const quick = Date.now() - started < QUICK_DEATH_MS;
    this.log.error({ worker: id, code, signal }, `worker ${id} died; starting another`);
    setTimeout(
      () => {
        if (this.stopping) return;
        this.fork(id).catch((err: Error) =>
          this.log.error({ err, worker: id }, 'a replacement worker failed'),
        );
      },
      quick ? RESTART_PAUSE_MS : 0,
    ).unref();
  }

  private heard(from: Worker, message: FromWorker): void {
    switch (message.prodgraph) {
      case 'rate': {
        const counted = this.windows.count(message.key, message.windowMs, message.increment);
        const answer: RateAnswer = { prodgraph: 'rate', id: message.id, ...counted };
        from.send(answer);
        return;
      }
      case 'commit':
        for (const { worker } of this.workers.values()) if (worker !== from) worker.send(message);
        return;
      case 'metrics':
        this.text().then(
          (text) => from.send({ prodgraph: 'metrics', id: message.id, text } satisfies MetricsAnswer),
          (err: Error) =>
            from.send({ prodgraph: 'metrics', id: message.id, error: err.message } satisfies MetricsAnswer),
        );
        return;
      default:
    }
  }

  /** Every worker's metrics, combined as each metric declares (Metrics). */
  text(): Promise<string> {
    return this.aggregator.clusterMetrics();
  }

  get contentType(): string {
    return this.aggregator.contentType;
  }

  /** Asks every worker to finish its requests (after draining, if asked) and exit; true when all exited 0. */
  async stopAll(drain: boolean): Promise<boolean> {
    this.stopping = true;
    const exits = [...this.workers.values()].map(
      ({ worker }) =>
        new Promise<boolean>((resolve) => {
          if (worker.isDead()) return resolve(true);
          worker.once('exit', (code) => resolve(code === 0));
          worker.send({ prodgraph: 'stop', drain });
        }),
    );
    return (await Promise.all(exits)).every(Boolean);
  }
}
