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
 * worker processes sharing the port (servePrimary). A process forked as a worker builds its app
 * with what the workers share (workerOptions).
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
  const { options, link } = workerOptions(config.db.dialect);
  const app = await buildApp({ config, store: new FileMediaStore(config.mediaDir), ...options });
  const stop = await listenUntilStopped(app, config);
  link.whenStopped((drain) => stop('the primary', drain));
  link.ready();
}

/**
 * Listens until stopped. SIGTERM (a service manager, a rolling restart; or the returned stop
 * with drain) first drains for `PRODGRAPH_DRAIN_MS`: the server serves as before while /healthz
 * answers 503, so a balancer stops sending it requests before it stops taking them. Then, as
 * at once on SIGINT: it stops accepting connections, lets in-flight requests finish (held
 * long-polls answer the page they have; new requests on open keep-alive connections get 503),
 * closes the database and exits 0. Requests still running `PRODGRAPH_SHUTDOWN_TIMEOUT_MS`
 * after that are cut (their transactions roll back, their staged files are settled at the next
 * start). A second signal during the drain ends it at once.
 */
async function listenUntilStopped(
  app: App,
  config: Config,
): Promise<(reason: string, drain: boolean) => void> {
  let state: 'serving' | 'draining' | 'closing' = 'serving';
  let drained: NodeJS.Timeout | undefined;
  const close = (reason: string) => {
    state = 'closing';
    clearTimeout(drained);
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
  const stop = (reason: string, drain: boolean) => {
    if (state === 'closing') return;
    if (state === 'draining' || !drain || config.timeouts.drainMs === 0) return close(reason);
    state = 'draining';
    app.drain();
    app.log.info(
      { signal: reason, drainMs: config.timeouts.drainMs },
      'draining: /healthz answers 503, requests are still served until the drain ends',
    );
    drained = setTimeout(() => close(reason), config.timeouts.drainMs);
  };
  process.on('SIGINT', () => stop('SIGINT', false));
  process.on('SIGTERM', () => stop('SIGTERM', true));
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    // a taken port must not leave a half-started process holding the database
    await app.close();
    throw err;
  }
  return stop;
}
