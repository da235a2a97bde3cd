import { buildApp } from './app.js';
import type { Config } from './config.js';
import { FileMediaStore } from './media/store.js';

/** Runs the service until SIGINT/SIGTERM, then closes connections cleanly. */
export async function serve(config: Config): Promise<void> {
  const store = new FileMediaStore(config.mediaDir);
  const app = await buildApp({ config, store, webhooks: true });
  await store.sweepStaging().catch((err) => app.log.warn({ err }, 'could not sweep staged media'));
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
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
