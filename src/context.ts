import type { SigningSecrets } from './auth/signing-secrets.js';
import type { Config } from './config.js';
import type { Db, Dialect } from './db/index.js';
import type { MediaStore } from './media/store.js';
import type { WaitClock } from './util/wait-clock.js';

/**
 * Wakes long-polls and webhook delivery when a production's changes commit; the one
 * implementation is ChangeWatch, built by the app (buildApp).
 */
export interface ChangeWaiter {
  /**
   * Resolves once the production may have a change after `afterId`, after `timeoutMs`, when
   * `signal` aborts or when the watch closes: true while it is open, false once it has closed.
   */
  next(productionId: number, afterId: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** How many readers wait right now (the metrics' change-feed waiters). */
  readonly waiting: number;
}

/** What every service may use. Nothing here knows about HTTP. */
export interface AppContext {
  config: Config;
  db: Db;
  dialect: Dialect;
  store: MediaStore;
  /** Wakes long-polls and webhook delivery when a production's changes commit. */
  changes: ChangeWaiter;
  /** What signs and verifies media tickets, the same on every server of a deployment. */
  secrets: SigningSecrets;
  /** What long waits are timed on (a held long-poll): the process's own clock but in tests. */
  clock: WaitClock;
}
