import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0004 from './0004_season.js';
import * as m0006 from './0006_changes.js';
import * as m0009 from './0009_webhooks.js';

/** Numbered and frozen; names sort in the order they must run. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0004_season': m0004,
  '0006_changes': m0006,
  '0009_webhooks': m0009,
};
