import { PostgresAdapter, type Kysely } from 'kysely';

/*
 * Frozen once shipped. A key may carry an expiry (`api_keys.expires_at`): refused after it as
 * strictly as a revoked key. `audit_events` is the append-only audit trail: every admin action
 * and every download by an engagement-bound key, written in the transaction of the change it
 * records. The actor is copied into the row (key prefix and label, person, engagement) rather
 * than referred to, so a row still says who acted after the key or person is gone; only the
 * production is referred to. `at` is the database's clock, never a server's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'text').execute();
  await db.schema
    .createTable('audit_events')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) =>
      pg ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('production_id', 'integer', (c) =>
      c.notNull().references('productions.id').onDelete('cascade'),
    )
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('person_id', 'integer')
    .addColumn('key_id', 'integer')
    .addColumn('key_prefix', 'text')
    .addColumn('key_label', 'text')
    .addColumn('engagement_id', 'integer')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text')
    .addColumn('object_id', 'integer')
    .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('ip', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_events_production_id')
    .on('audit_events')
    .columns(['production_id', 'id'])
    .execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').columns(['at', 'id']).execute();
  await db.schema
    .createIndex('audit_events_engagement')
    .on('audit_events')
    .columns(['production_id', 'engagement_id', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
