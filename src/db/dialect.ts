import { PostgresAdapter } from 'kysely';
import type { Db } from './index.js';

/** Whether `db` (a handle or a transaction) talks to PostgreSQL, where every statement is a round trip. */
export const onPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;
