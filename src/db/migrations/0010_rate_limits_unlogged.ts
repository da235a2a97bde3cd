import { PostgresAdapter, sql, type Kysely } from 'kysely';

/*
 * Frozen once shipped. PostgreSQL: the request counters need no crash safety (a window lost in a
 * crash only lets its callers start afresh), and every request writes one. As an ordinary table
 * each of those writes waited for the write-ahead log to reach the disk; an unlogged table writes
 * no log, so the upsert commits without that wait (a cached answer on one worker served markedly
 * more requests a second, bench/FINDINGS.md). Its rows are emptied after a crash, and it is not
 * copied to standby servers. SQLite keeps its counters in memory (rateLimits): no change there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table rate_limits set unlogged`.execute(db);
}
