import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from '../index.js';
import { compileKeyOf } from './kysely-surface.js';
import { planEachRun, prepareOnPostgres } from './statement-names.js';

/**
 * A hot statement built and compiled once per database, then run with fresh parameters.
 * Kysely builds an operation tree and compiles it to SQL on every call, and for a point lookup
 * that costs more than running the statement (the key lookup every request makes spent about
 * as long in Kysely's builder and compiler as in SQLite). Only for a statement whose SQL never
 * changes: `build` is called once with `sample` values, and every later call substitutes its
 * own parameters in the same order; on PostgreSQL it is a named prepared statement
 * (prepareOnPostgres), which our driver runs by name (postgresDialect). It still runs through the database's executor, so the
 * data layer's error mapping, query observers and metrics see it like any other query.
 *
 * The compiled form is kept per dialect adapter, which a database handle and every
 * transaction opened on it share, so a statement run inside a write's transaction is compiled
 * once too (a handle with Kysely plugins, which could change the SQL per handle, is refused).
 * Constants belong in the SQL (`sql.lit`), not among the parameters, and the sample values
 * must be distinct: the first compile checks that the statement's parameters are the sample,
 * in the order given, so a builder that places them in another order fails at once instead of
 * binding one value to another's column.
 */
export function compiledOnce<P extends readonly unknown[], R>(
  build: (db: Db, ...sample: P) => Compilable<R>,
  sample: P,
  /** 'each run': never a prepared statement; PostgreSQL plans it for the tables as they are (planEachRun). */
  plan: 'once' | 'each run' = 'once',
): (db: Db, ...parameters: P) => Promise<R[]> {
  const compiled = new WeakMap<object, CompiledQuery<R>>();
  return async (db, ...parameters) => {
    const adapter = compileKeyOf(db, 'a compiled-once statement');
    let query = compiled.get(adapter);
    if (!query) {
      query = build(db, ...sample).compile();
      checkParameters(query.parameters, sample);
      if (plan === 'once') prepareOnPostgres(query.sql);
      else planEachRun(query.sql);
      compiled.set(adapter, query);
    }
    const { rows } = await db.executeQuery<R>({ ...query, parameters });
    return rows;
  };
}

function checkParameters(compiled: readonly unknown[], sample: readonly unknown[]): void {
  const same = compiled.length === sample.length && compiled.every((value, i) => value === sample[i]);
  if (!same) {
    throw new Error(
      `a compiled-once statement's parameters are ${JSON.stringify(compiled)}, not its sample ${JSON.stringify(sample)} in that order`,
    );
  }
}
