import { PostgresAdapter, type Kysely } from 'kysely';

/*
 * Frozen once shipped. Webhook subscriptions and their delivery log.
 *
 * A subscription keeps its own position in the change log (`cursor`, the last change id it
 * delivered or skipped), so delivery resumes after a restart exactly where it stopped. The
 * secret signs deliveries, so it is stored as given (an HMAC key cannot be hashed); the API
 * shows it once. `lease_owner`/`lease_until` let one process at a time deliver a
 * subscription when several serve the same database; `failures` and `next_attempt_at` carry
 * the backoff across restarts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const serial = pg ? 'bigserial' : 'integer';
  await db.schema
    .createTable('webhooks')
    .addColumn('id', pg ? 'serial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('production_id', 'integer', (c) =>
      c.notNull().references('productions.id').onDelete('cascade'),
    )
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('kinds', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('cursor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_delivered_at', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_production_id').on('webhooks').column('production_id').execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', serial, (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('change_id', 'bigint', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('delivered', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_webhook_id')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'id'])
    .execute();
}
