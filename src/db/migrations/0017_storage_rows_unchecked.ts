import { PostgresAdapter, sql, type Kysely } from 'kysely';

/*
 * Frozen once shipped. PostgreSQL: a storage agent's batch writes one row per event into
 * storage_events and library_files and one change row each, and PostgreSQL checks a foreign key
 * row by row (a lookup of the production, locked for key share, per row). For these three tables
 * that check guards nothing the writes do not already guarantee: their production_id is always
 * the caller's own production, written in the same transaction that has just read it, and no
 * production is ever deleted. Without the check a batch applies markedly faster (bench/FINDINGS.md,
 * "Storage rows without the production check"). SQLite checks a key within the process,
 * at no cost worth a change: nothing changes there.
 */
const TABLES = ['storage_events', 'library_files', 'changes'];

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of TABLES) {
    const found = await sql<{ name: string }>`
      select conname as name from pg_constraint
      where contype = 'f' and conrelid = ${table}::regclass and confrelid = 'productions'::regclass`.execute(
      db,
    );
    for (const { name } of found.rows)
      await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(name)}`.execute(db);
  }
}
