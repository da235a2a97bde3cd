import type { Kysely } from 'kysely';

/*
 * Frozen once shipped. The secrets that sign what the server hands out to be shown back later
 * (media tickets), kept in the database so every server of a deployment signs and verifies with
 * the same one without being told. `generation` numbers them: the newest signs; one that
 * `retired_at` a rotation still verifies until whatever it signed has expired, then goes.
 * Timestamps are the database's clock, in the stored form.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('signing_secrets')
    .addColumn('generation', 'integer', (c) => c.primaryKey())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
