import type { Kysely } from 'kysely';

/*
 * Frozen once shipped. An engagement webhook is told when a grant of its engagement lapses
 * (its `expires_at` passes). Nothing is written to the production when that happens, so the
 * change log has no entry for it: the subscription keeps its own position among its
 * engagement's expiries instead, `expiries_at` (the instant announced up to) and
 * `expiries_grant_id` (the last grant announced at that instant), so a restart neither repeats
 * nor skips one. A delivery attempt of such an announcement names the grant in
 * `webhook_deliveries.expired_grant_id` (its `change_id` is the feed position it was made at).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('expiries_at', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('expiries_grant_id', 'integer').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('expired_grant_id', 'integer').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
