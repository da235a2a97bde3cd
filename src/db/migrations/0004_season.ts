import type { Kysely } from 'kysely';

/*
 * Frozen once shipped. A production lives for a season, its document imported again and again
 * as it changes; these columns let a row outlive the document that wrote it:
 * - `retired_at` on nodes, deliveries and engagements: a document sync retires an object whose
 *   ref left the document while something still refers to it, instead of deleting it. A
 *   timestamp, never a deletion or a status, so a change feed can still report the row.
 * - `source` on engagements, grants and versions: `document` (written by an import) or what
 *   else made the row (`admin` for the admin CLI and API, `api` for a landed version), so a
 *   sync never retires or rewrites what it did not write.
 * - `retired_by` / `revoked_by`: who archived an engagement or revoked a grant (`document`
 *   for a sync), so a sync can tell its own retirement from an administrator's.
 */

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['nodes', 'deliveries', 'engagements']) {
    await db.schema.alterTable(table).addColumn('retired_at', 'text').execute();
  }
  await db.schema.alterTable('engagements').addColumn('retired_by', 'text').execute();
  await db.schema
    .alterTable('engagements')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('document'))
    .execute();
  await db.schema
    .alterTable('grants')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('document'))
    .execute();
  await db.schema.alterTable('grants').addColumn('revoked_by', 'text').execute();
  // before this migration only an import could revoke a grant
  await (db as Kysely<{ grants: { revoked_by: string | null; revoked_at: string | null } }>)
    .updateTable('grants')
    .set({ revoked_by: 'document' })
    .where('revoked_at', 'is not', null)
    .execute();
  await db.schema
    .alterTable('versions')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('document'))
    .execute();
  // Landed versions were the only ones whose media names an uploader (the import never set one).
  const typed = db as Kysely<{
    versions: { source: string; ref: string | null; media_id: number | null };
    media: { id: number; created_by: string | null };
  }>;
  await typed
    .updateTable('versions')
    .set({ source: 'api' })
    .where('ref', 'is', null)
    .where('media_id', 'in', (eb) =>
      eb.selectFrom('media').where('media.created_by', 'is not', null).select('media.id'),
    )
    .execute();
  await db.schema.createIndex('nodes_production_ref').on('nodes').columns(['production_id', 'ref']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
