import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0004 from './0004_season.js';
import * as m0005 from './0005_node_bounded_indexes.js';
import * as m0006 from './0006_changes.js';
import * as m0007 from './0007_rate_limits.js';
import * as m0008 from './0008_updated_at.js';
import * as m0009 from './0009_webhooks.js';
import * as m0010 from './0010_rate_limits_unlogged.js';
import * as m0011 from './0011_live_counts.js';
import * as m0012 from './0012_turnover_round_trip.js';
import * as m0013 from './0013_engagement_webhook_expiries.js';
import * as m0014 from './0014_signing_secrets.js';
import * as m0015 from './0015_key_expiry_audit.js';
import * as m0016 from './0016_sign_in.js';
import * as m0017 from './0017_storage_rows_unchecked.js';

/** Numbered and frozen; names sort in the order they must run. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0004_season': m0004,
  '0005_node_bounded_indexes': m0005,
  '0006_changes': m0006,
  '0007_rate_limits': m0007,
  '0008_updated_at': m0008,
  '0009_webhooks': m0009,
  '0010_rate_limits_unlogged': m0010,
  '0011_live_counts': m0011,
  '0012_turnover_round_trip': m0012,
  '0013_engagement_webhook_expiries': m0013,
  '0014_signing_secrets': m0014,
  '0015_key_expiry_audit': m0015,
  '0016_sign_in': m0016,
  '0017_storage_rows_unchecked': m0017,
};
