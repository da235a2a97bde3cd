import { PostgresAdapter } from 'kysely';
import type { Db } from '../index.js';

/*
 * What our machinery reads of Kysely beyond its documented surface, in one place (the driver
 * test holds these to the Kysely installed). `getExecutor()` is marked internal in Kysely's
 * types, but it is the only way to learn which dialect a handle or a transaction talks to and
 * whether a plugin rewrites its SQL, and no dialect or driver hook can tell us either: a
 * statement is compiled before the driver sees it.
 */

/**
 * The object a statement compiled once is kept by: the dialect adapter, which a database handle
 * and every transaction opened on it share. A handle with Kysely plugins (withSchema, say) may
 * change the SQL per handle, which the key would not see, so it is refused.
 */
export function compileKeyOf(db: Db, what: string): object {
  const executor = db.getExecutor();
  if (executor.plugins.length > 0) throw new Error(`${what} runs only on a handle without plugins`);
  return executor.adapter;
}

/** Whether `db` (a handle or a transaction) talks to PostgreSQL, where every statement is a round trip. */
export const onPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;
