import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { Db } from './index.js';

/** The database's clock now, in milliseconds since the epoch (see dbClock). */
export async function databaseNow(db: Db): Promise<number> {
  const { rows } = await sql<{ now: string }>`select ${dbClock(db)} as now`.execute(db);
  return Date.parse(rows[0]!.now);
}

/**
 * The database's own clock, `offsetMs` from now, in the stored form of timestamps (ISO 8601,
 * UTC, milliseconds: what `nowIso()` writes, so the two compare as text). For what several
 * processes on several hosts must agree on (a lease): one clock for all of them, whatever each
 * host's own clock says.
 */
export function dbClock(db: Db, offsetMs = 0): RawBuilder<string> {
  const ms = Math.round(offsetMs);
  if (db.getExecutor().adapter instanceof PostgresAdapter)
    return sql<string>`to_char((now() + ${sql.lit(ms)} * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  // a literal, as on PostgreSQL: a statement compiled once (compiledOnce) holds no parameter of its own
  return sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${sql.lit(`${ms / 1000} seconds`)})`;
}
