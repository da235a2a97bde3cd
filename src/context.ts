import type { SigningSecrets } from './auth/signing-secrets.js';
import type { Config } from './config.js';
import type { Db, Dialect } from './db/index.js';
import type { MediaStore } from './media/store.js';
import type { ChangeWatch } from './modules/changes/watch.js';

/** What every service may use. Nothing here knows about HTTP. */
export interface AppContext {
  config: Config;
  db: Db;
  dialect: Dialect;
  store: MediaStore;
  /** Wakes long-polls and webhook delivery when a production's changes commit. */
  changes: ChangeWatch;
  /** What signs and verifies media tickets, the same on every server of a deployment. */
  secrets: SigningSecrets;
}
