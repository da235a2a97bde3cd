import { buildApp } from './app.js';
import type { Config } from './config.js';
import { recoverStaged } from './media/recovery.js';
import { FileMediaStore } from './media/store.js';
import { reportStart } from './ops/start-report.js';

/**
 * Runs the service until SIGINT/SIGTERM. Then: stop accepting connections, let in-flight
 * requests finish (new ones on open keep-alive connections get 503), close the database and
 * exit 0. Requests still running after `PRODGRAPH_SHUTDOWN_TIMEOUT_MS` are cut (their
 * transactions roll back, their staged files are settled at the next start).
 */
export async function serve(config: Config): Promise<void> {
  const store = new FileMediaStore(config.mediaDir);
  const app = await buildApp({ config, store, webhooks: true, metricsListener: true });
  // files of writes a crash interrupted: placed if their rows committed, removed if not
  await recoverStaged(app.ctx.db, store).then(
    (r) => (r.placed || r.removed) && app.log.info(r, 'settled staged media of interrupted writes'),
    (err) => app.log.warn({ err }, 'could not settle staged media'),
  );
  await reportStart(app, config);
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
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
}
