import cluster from 'node:cluster';
import { buildApp, type App } from './app.js';
import { refuseUnfinishedRestore } from './backup/pending.js';
import type { Config } from './config.js';
import { recoverStaged } from './media/recovery.js';
import { FileMediaStore } from './media/store.js';
import { reportStart } from './ops/start-report.js';
import { servePrimary } from './cluster/primary.js';
import { workerOptions } from './cluster/worker.js';

/**
 * Runs the service until SIGINT/SIGTERM: one process, or with `--workers N` a primary and N
 * worker processes sharing the port (src/cluster/). A process forked as a worker builds its app
 * with what the workers share (src/cluster/worker.ts).
 */
export async function serve(config: Config): Promise<void> {
  if (cluster.isWorker) return serveWorker(config);
  // before the database is opened: serving would create (or migrate) one where a restore's belongs
  await refuseUnfinishedRestore(config.mediaDir, config.db);
  if (config.workers > 1) return servePrimary(config);
  const store = new FileMediaStore(config.mediaDir);
  const app = await buildApp({ config, store, webhooks: true, metricsListener: true });
  // files of writes a crash interrupted: placed if their rows committed, removed if not
  await recoverStaged(app.ctx.db, store).then(
    (r) => (r.placed || r.removed) && app.log.info(r, 'settled staged media of interrupted writes'),
    (err) => app.log.warn({ err }, 'could not settle staged media'),
  );
  await reportStart(app, config);
  await listenUntilStopped(app, config);
}

/** A worker of a cluster: the primary has migrated, settled staged media and reported. */
async function serveWorker(config: Config): Promise<void> {
  const { options, link } = workerOptions();
  const app = await buildApp({ config, store: new FileMediaStore(config.mediaDir), ...options });
  const stop = await listenUntilStopped(app, config);
  link.whenStopped(() => stop('the primary'));
  link.ready();
}

/**
 * Listens, and on SIGINT/SIGTERM (or the returned stop): stops accepting connections, lets
 * in-flight requests finish (new ones on open keep-alive connections get 503), closes the
 * database and exits 0. Requests still running after `PRODGRAPH_SHUTDOWN_TIMEOUT_MS` are cut
 * (their transactions roll back, their staged files are settled at the next start).
 */
async function listenUntilStopped(app: App, config: Config): Promise<(reason: string) => void> {
  let closing = false;
  const stop = (reason: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal: reason }, 'shutting down: finishing in-flight requests');
    const cut = setTimeout(() => {
      app.log.warn('shutdown timeout: cutting the requests still in flight');
      app.server.closeAllConnections();
    }, config.timeouts.shutdownMs);
    // last resort, should closing itself hang
    const bail = setTimeout(() => process.exit(1), config.timeouts.shutdownMs + 10_000);
    cut.unref();
    bail.unref();
    app.close().then(
      () => {
        app.log.info('shut down cleanly');
        process.exit(0);
      },
      (err) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    // a taken port must not leave a half-started process holding the database
    await app.close();
    throw err;
  }
  return stop;
}
