import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { AppError } from '../errors.js';

/*
 * A database refusal a request can provoke (a duplicate, a row that vanished, a value the
 * database cannot take) becomes a catalogue error where the query runs, with the driver's error
 * as its `cause`. Services check first, so these are a backstop; being mapped here rather than
 * in the HTTP error handler, they answer alike on every surface (REST, MCP tools, the CLI) and
 * say nothing of the SQL or the constraint. Anything else a driver throws is left as it is: an
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

const mapped = (err: unknown): unknown => refusalOf(err) ?? err;

/** A connection whose failed queries throw catalogue errors for the refusals above. */
class RefusingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (err) {
      throw mapped(err);
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (err) {
      throw mapped(err);
    }
  }
}

// the dialect's own driver gets back the connection it made (it keeps private state on it)
const innerOf = (c: DatabaseConnection): DatabaseConnection =>
  c instanceof RefusingConnection ? c.inner : c;

class RefusingDriver implements Driver {
  readonly savepoint?: Driver['savepoint'];
  readonly rollbackToSavepoint?: Driver['rollbackToSavepoint'];
  readonly releaseSavepoint?: Driver['releaseSavepoint'];

  constructor(private readonly inner: Driver) {
    // savepoints exactly where the dialect's driver has them (Kysely refuses them otherwise)
    const savepoint = inner.savepoint?.bind(inner);
    const rollbackTo = inner.rollbackToSavepoint?.bind(inner);
    const release = inner.releaseSavepoint?.bind(inner);
    if (savepoint) this.savepoint = (c, name, compile) => savepoint(innerOf(c), name, compile);
    if (rollbackTo) this.rollbackToSavepoint = (c, name, compile) => rollbackTo(innerOf(c), name, compile);
    if (release) this.releaseSavepoint = (c, name, compile) => release(innerOf(c), name, compile);
  }

  init = () => this.inner.init();
  destroy = () => this.inner.destroy();
  acquireConnection = async () => new RefusingConnection(await this.inner.acquireConnection());
  releaseConnection = (c: DatabaseConnection) => this.inner.releaseConnection(innerOf(c));
  beginTransaction = (c: DatabaseConnection, settings: TransactionSettings) =>
    this.inner.beginTransaction(innerOf(c), settings);
  commitTransaction = (c: DatabaseConnection) => this.inner.commitTransaction(innerOf(c));
  rollbackTransaction = (c: DatabaseConnection) => this.inner.rollbackTransaction(innerOf(c));
}

/** `dialect`, with the refusals a request can provoke thrown as catalogue errors. */
export function refusingDialect(dialect: Dialect): Dialect {
  return {
    createDriver: (): Driver => new RefusingDriver(dialect.createDriver()),
    createQueryCompiler: (): QueryCompiler => dialect.createQueryCompiler(),
    createAdapter: (): DialectAdapter => dialect.createAdapter(),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own signature
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => dialect.createIntrospector(db),
  };
}
