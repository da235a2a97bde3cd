import { PostgresAdapter, type Kysely } from 'kysely';

/*
 * Frozen once shipped. The production's revision and its change log: every committed write
 * bumps `productions.revision` (taking the production row's lock until commit, so writers of
 * one production commit in the order their changes were numbered) and appends one row per
 * object it created, updated or retired. Caches key on the revision; the change feed reads
 * the log by id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable('productions')
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('changes')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) =>
      pg ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('production_id', 'integer', (c) =>
      c.notNull().references('productions.id').onDelete('cascade'),
    )
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('object_id', 'integer', (c) => c.notNull())
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('actor', 'text')
    .execute();
  await db.schema
    .createIndex('changes_production_id')
    .on('changes')
    .columns(['production_id', 'id'])
    .execute();
}
