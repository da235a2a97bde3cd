import { AppError } from '../errors.js';

/*
 * A database refusal a request can provoke (a duplicate, a row that vanished, a value the
 * database cannot take) becomes a catalogue error where the query runs, with the driver's error
 * as its `cause` (our drivers' connections throw it: sqliteDialect, postgresDialect). Services
 * check first, so these are a backstop; being mapped there rather than in the HTTP error handler,
 * they answer alike on every surface (REST, MCP tools, the CLI) and say nothing of the SQL or the
 * constraint. Anything else a driver throws is left as it is: an
 * unexpected failure, answered 500 and logged.
 */

const refusal = (status: 409 | 422, detail: string, cause: unknown) =>
  new AppError(status, detail, {}, undefined, undefined, { cause });

/** The catalogue error for a driver error a request can provoke; null for any other error. */
export function refusalOf(err: unknown): AppError | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  // PostgreSQL's SQLSTATE, or better-sqlite3's extended result code
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
    return refusal(409, 'this conflicts with a record that exists already; nothing was written', err);
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY')
    return refusal(
      409,
      'this refers to a record that does not exist (or no longer does); nothing was written',
      err,
    );
  // 22xxx: a value PostgreSQL cannot take (out of range, bad encoding); 54000: a value too long to index
  if (/^22[0-9A-Z]{3}$/.test(code) || code === '54000' || code === 'SQLITE_TOOBIG')
    return refusal(
      422,
      'a value in this request cannot be stored (out of range or too long); nothing was written',
      err,
    );
  return null;
}

/** Whether an error is a database refusal mapped here (its cause is the driver's own error). */
export const isDatabaseRefusal = (err: unknown): err is AppError =>
  err instanceof AppError && err.cause !== undefined && refusalOf(err.cause) !== null;
