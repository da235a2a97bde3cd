import type { Kysely } from 'kysely';

/*
 * Frozen once shipped. Request counters shared by every server process on one database
 * (rateLimits): one row per limited caller (`key:<api key id>` or `ip:<address>`),
 * the start of its current window (Unix milliseconds) and the requests counted in it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .execute();
}
