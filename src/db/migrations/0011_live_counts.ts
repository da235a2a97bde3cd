import type { Kysely } from 'kysely';

/*
 * Frozen once shipped. `GET /production` counts the production's live nodes, live scenes and
 * deliveries in flight whenever its cached answer is rebuilt, which is after every write. The
 * indexes it had (production and kind; production alone) could find the rows but not tell a
 * retired one, so each count read every row of the table it counted, a cost that grew with the
 * production, holding the event loop, on every write (bench/FINDINGS.md, fifth pass). With the
 * retirement in the index each count reads the index alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('nodes_production_live')
    .on('nodes')
    .columns(['production_id', 'retired_at', 'kind'])
    .execute();
  await db.schema
    .createIndex('deliveries_production_live')
    .on('deliveries')
    .columns(['production_id', 'retired_at', 'status'])
    .execute();
}
