import { PostgresAdapter, sql, type Insertable, type RawBuilder } from 'kysely';
import type { Db } from '../db/index.js';
import type { AuditEventsTable } from '../db/schema.js';

/** An audit row as written: every column but the id and the time (the database's: auditNow). */
export type AuditRow = Omit<Insertable<AuditEventsTable>, 'id' | 'at'>;

/** The database's clock as the stored form (`2026-11-29T10:00:00.000Z`): no server's clock decides `at`. */
export function auditNow(db: Db): RawBuilder<string> {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql<string>`to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
}

export async function insertAuditRow(db: Db, row: AuditRow): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({ ...row, at: auditNow(db) })
    .execute();
}

/** Every production here: an installation's action (a secret's rotation) is recorded in each one's trail. */
export async function allProductionIds(db: Db): Promise<number[]> {
  const rows = await db.selectFrom('productions').select('id').orderBy('id').execute();
  return rows.map((r) => r.id);
}
