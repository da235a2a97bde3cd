import { sql, type Kysely } from 'kysely';

/*
 * Frozen once shipped. `updated_at` on every table whose rows the API returns and a write can
 * change (nodes and approvals have had one since 0001), so lists can answer `updated_since`.
 * Nullable only because SQLite cannot add a NOT NULL column without a constant default; every
 * write path fills it (stampUpdatedAt) and this backfill leaves no row without one.
 *
 * Backfill: the last time the change log (0006) saw the object, else the row's own best
 * timestamp, else the production's creation.
 */

/** table → change-log kind, and the row's own timestamps to fall back on, best first. */
const TABLES: ReadonlyArray<{ table: string; kind: string; fallback: readonly string[] }> = [
  { table: 'departments', kind: 'department', fallback: [] },
  { table: 'people', kind: 'person', fallback: [] },
  { table: 'versions', kind: 'version', fallback: ['created_at'] },
  { table: 'media', kind: 'media', fallback: ['created_at'] },
  { table: 'shoot_days', kind: 'shoot_day', fallback: [] },
  { table: 'department_notes', kind: 'department_note', fallback: ['created_at'] },
  { table: 'deliveries', kind: 'delivery', fallback: ['retired_at'] },
  { table: 'engagements', kind: 'engagement', fallback: ['retired_at', 'created_at'] },
  { table: 'grants', kind: 'grant', fallback: ['revoked_at', 'created_at'] },
  { table: 'purchase_orders', kind: 'purchase_order', fallback: [] },
  { table: 'script_changes', kind: 'script_change', fallback: ['detected_at'] },
  { table: 'generation_jobs', kind: 'job', fallback: ['finished_at', 'created_at'] },
  { table: 'storage_tasks', kind: 'storage_task', fallback: ['settled_at', 'approved_at'] },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const { table, kind, fallback } of TABLES) {
    await db.schema.alterTable(table).addColumn('updated_at', 'text').execute();
    const t = sql.table(table);
    const own = fallback.map((c) => sql.ref(`${table}.${c}`));
    const production = sql`(select p.created_at from productions p where p.id = ${sql.ref(`${table}.production_id`)})`;
    const best = own.length ? sql`coalesce(${sql.join([...own, production])})` : production;
    await sql`update ${t} set updated_at = ${best}`.execute(db);
    // one pass over the log per table, not one lookup per row
    await sql`
      update ${t} set updated_at = x.at
      from (select production_id, object_id, max(at) as at from changes where kind = ${kind}
            group by production_id, object_id) as x
      where ${sql.ref(`${table}.id`)} = x.object_id and ${sql.ref(`${table}.production_id`)} = x.production_id
    `.execute(db);
  }
  await pagingIndexes(db);
}

/**
 * The lists that page walk their sort key from a cursor, and `updated_since` asks for the newest
 * stamps: without these a page of assets sorts the whole production first.
 */
async function pagingIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('nodes_production_position')
    .on('nodes')
    .columns(['production_id', 'position', 'id'])
    .execute();
  await db.schema
    .createIndex('nodes_production_updated')
    .on('nodes')
    .columns(['production_id', 'updated_at'])
    .execute();
  await db.schema
    .createIndex('deliveries_production_position')
    .on('deliveries')
    .columns(['production_id', 'position', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
