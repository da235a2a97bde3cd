import { PostgresAdapter, sql } from 'kysely';
import type SQLite from 'better-sqlite3';
import type { Db } from './index.js';

/*
 * Planner statistics. Without them SQLite plans by rules of thumb and PostgreSQL by defaults,
 * and both picked a walk of a whole production for queries that touch a handful of rows
 * (bench/FINDINGS.md §1). The hot statements are written so their plan does not depend on
 * statistics (test/query-plans.test.ts); the rest of the queries still deserve good ones.
 */

/**
 * Rows SQLite's ANALYZE samples per index: SQLite's own recommendation for connections that
 * run `PRAGMA optimize`, and enough to tell a selective index from a production-wide one.
 * Keeps ANALYZE of a season-sized database to milliseconds instead of seconds.
 */
const SQLITE_ANALYSIS_LIMIT = 1000;

/** How often a long-lived SQLite connection re-analyses the tables whose size has changed much. */
export const SQLITE_OPTIMIZE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Sets up a SQLite connection to keep its statistics current: a bounded ANALYZE, then
 * `PRAGMA optimize` now (which analyses whatever was never analysed, e.g. a database imported
 * by an older version), every hour (a server's database grows through the API) and on close.
 * `PRAGMA optimize` re-analyses only the tables that changed enough to matter. Answers the
 * function to call before closing.
 */
export function keepSqliteStatistics(sqlite: SQLite.Database): () => void {
  sqlite.pragma(`analysis_limit = ${SQLITE_ANALYSIS_LIMIT}`);
  const optimize = (mask = '') => {
    try {
      sqlite.pragma(`optimize${mask}`);
    } catch {
      // statistics are an optimisation: a read-only or busy database serves without them
    }
  };
  // 0x10002: analyse every table that might benefit, including those never analysed
  optimize('=0x10002');
  const timer = setInterval(() => optimize(), SQLITE_OPTIMIZE_INTERVAL_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    optimize();
  };
}

/**
 * Fresh statistics after a bulk change (an import or a sync), run after its commit. SQLite:
 * ANALYZE (bounded by the connection's analysis_limit). PostgreSQL: autovacuum would get there
 * eventually, but not before the first requests; `VACUUM (ANALYZE)` of this schema's tables
 * also sets the visibility map, so index-only scans stop fetching every heap page. Only the
 * current schema's tables: another install or a parallel test in another schema is not ours.
 */
export async function refreshStatistics(db: Db): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    await sql`analyze`.execute(db);
    return;
  }
  const { rows } = await sql<{ name: string }>`
    select quote_ident(table_name) as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  if (rows.length === 0) return;
  await sql`vacuum (analyze) ${sql.raw(rows.map((r) => r.name).join(', '))}`.execute(db);
}
