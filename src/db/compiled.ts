import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './index.js';
import { prepareOnPostgres } from './pg-prepared.js';

/**
 * A hot statement built and compiled once per database, then run with fresh parameters.
 * Kysely builds an operation tree and compiles it to SQL on every call, and for a point lookup
 * that costs more than running the statement (the key lookup every request makes spent about
 * as long in Kysely's builder and compiler as in SQLite). Only for a statement whose SQL never
 * changes: `build` is called once with `sample` values, and every later call substitutes its
 * own parameters in the same order; on PostgreSQL it is a named prepared statement
 * (src/db/pg-prepared.ts). It still runs through the database's executor, so the
 * data layer's error mapping, query observers and metrics see it like any other query.
 */
export function compiledOnce<P extends readonly unknown[], R>(
  build: (db: Db, ...sample: P) => Compilable<R>,
  sample: P,
): (db: Db, ...parameters: P) => Promise<R[]> {
  const compiled = new WeakMap<Db, CompiledQuery<R>>();
  return async (db, ...parameters) => {
    let query = compiled.get(db);
    if (!query) {
      query = build(db, ...sample).compile();
      if (query.parameters.length !== parameters.length) {
        throw new Error(
          `a compiled-once statement takes ${query.parameters.length} parameters, given ${parameters.length}`,
        );
      }
      prepareOnPostgres(query.sql);
      compiled.set(db, query);
    }
    const { rows } = await db.executeQuery<R>({ ...query, parameters });
    return rows;
  };
}
