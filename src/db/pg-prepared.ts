import type pg from 'pg';

/** SQL text → the name of its prepared statement on every PostgreSQL connection. */
const names = new Map<string, string>();

/**
 * Marks a statement that runs on most requests to be prepared once per PostgreSQL connection
 * and executed by name from then on: PostgreSQL then skips parsing and planning it on every
 * run (for the key lookup, a three-table join, that was most of its time in the server). Only
 * for a bounded set of fixed SQL texts (src/db/compiled.ts): every connection keeps each one
 * for its life.
 */
export function prepareOnPostgres(sql: string): void {
  if (!names.has(sql)) names.set(sql, `prodgraph_${names.size + 1}`);
}

/**
 * Has `client` run the marked statements by name. Kysely's driver calls
 * `client.query(text, values)`; the pg driver prepares a named statement on its first use on a
 * connection and reuses it after.
 */
export function runMarkedPrepared(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 ? names.get(text) : undefined;
    return name === undefined ? query(...args) : query({ name, text, values });
  };
}
