import type { Kysely } from 'kysely';

/*
 * Frozen once shipped. Indexes that keep the hot statements' plans right whatever the
 * statistics (bench/FINDINGS.md §1). `versions_production_released` led with a column that
 * names the whole production and ended with a two-valued flag: every planner that picked it
 * (SQLite without statistics; PostgreSQL, which also ANDs it into bitmap scans on `released`
 * alone) walked all the production's released versions to answer for a few nodes. Released
 * versions are asked for by node, so the flag joins the node index instead; reads of a whole
 * production's versions (export, deleting a production) keep an index on the production alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('versions_production_released').execute();
  await db.schema
    .createIndex('versions_node_released')
    .on('versions')
    .columns(['node_id', 'released', 'version'])
    .execute();
  await db.schema.createIndex('versions_production').on('versions').columns(['production_id']).execute();
}
