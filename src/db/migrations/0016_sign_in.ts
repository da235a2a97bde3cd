import { PostgresAdapter, type Kysely } from 'kysely';

/*
 * Frozen once shipped. Signing in to the console with the studio's identity provider.
 *
 * `sign_in_people`: who may sign in to a production, by the email the provider vouches for,
 * with which console role (admin, coordinator, viewer), and optionally as which person of the
 * production. One row per production and email.
 *
 * `sign_in_attempts`: a sign-in started and not yet finished (the provider has not sent the
 * browser back). Kept in the database, not in one process, so the browser may come back to any
 * server. Keyed by the SHA-256 of the `state` the browser carries; deleted when used.
 *
 * `console_sessions`: a signed-in browser. The cookie's token is never stored, only its SHA-256.
 * Each session acts through an API key row of its own (`key_id`) that no token exists for, so
 * everything that records "which key" (activity, idempotency, media tickets) records the
 * session; ending the session revokes that key. `expires_at` slides with use, never past
 * `ends_at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = pg ? 'serial' : 'integer';
  await db.schema
    .createTable('sign_in_people')
    .addColumn('id', id, (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('production_id', 'integer', (c) =>
      c.notNull().references('productions.id').onDelete('cascade'),
    )
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('person_id', 'integer', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addUniqueConstraint('sign_in_people_production_email', ['production_id', 'email'])
    .execute();
  await db.schema.createIndex('sign_in_people_email').on('sign_in_people').column('email').execute();
  await db.schema
    .createTable('sign_in_attempts')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('production_code', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', id, (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('production_id', 'integer', (c) =>
      c.notNull().references('productions.id').onDelete('cascade'),
    )
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('key_id', 'integer', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    // kept when the person's sign-in is withdrawn: the session (ended) stays on record
    .addColumn('sign_in_id', 'integer', (c) => c.references('sign_in_people.id').onDelete('set null'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('ended_at', 'text')
    .execute();
  await db.schema.createIndex('console_sessions_key_id').on('console_sessions').column('key_id').execute();
  await db.schema
    .createIndex('console_sessions_production_id')
    .on('console_sessions')
    .columns(['production_id', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
