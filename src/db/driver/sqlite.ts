import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import { refusalOf } from '../refusals.js';
import { timedLockWaits } from './busy-wait.js';
import { Mutex, savepointSql, type TransactionCounter } from './shared.js';

const PRAGMA = /^\s*pragma\b/i;
/** Every transaction the service opens on SQLite writes, so it takes the write lock as it begins (timedLockWaits says why). */
export const BEGIN = 'begin immediate';

export interface SqliteDriverOptions {
  /** Statements kept prepared, least recently used out past this. */
  maxStatements?: number;
  /** A statement waited this long for another process's write lock (timedLockWaits). */
  onLockWait?: (durationMs: number, acquired: boolean) => void;
  /** A transaction committed (a COMMIT this driver ran). */
  onCommit?: TransactionCounter;
}

/**
 * Our SQLite dialect: Kysely's adapter, compiler and introspector, with a driver of ours over one
 * better-sqlite3 connection. Kysely's own driver prepares every query anew (which cost as much as
 * running it for the key lookup every request makes, and most of a multi-row INSERT's time for the
 * storage events: bench/FINDINGS.md §2) and begins its transactions with a plain BEGIN; ours
 * keeps each statement prepared and begins `BEGIN IMMEDIATE`, so neither depends on the text
 * Kysely's driver happens to send.
 */
export function sqliteDialect(sqlite: SQLite.Database, options: SqliteDriverOptions = {}): Dialect {
  return {
    createDriver: (): Driver => new SqliteDriver(new SqliteConnection(sqlite, options), options.onCommit),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new SqliteAdapter(),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own signature
    createIntrospector: (db: Kysely<any>) => new SqliteIntrospector(db),
  };
}

/** SQLite has one connection: a query or transaction holds it until released. */
class SqliteDriver implements Driver {
  private readonly mutex = new Mutex();

  constructor(
    private readonly connection: SqliteConnection,
    private readonly onCommit?: TransactionCounter,
  ) {}

  init = async (): Promise<void> => undefined;
  acquireConnection = async (): Promise<DatabaseConnection> => {
    await this.mutex.lock();
    return this.connection;
  };
  releaseConnection = async (): Promise<void> => this.mutex.unlock();
  destroy = async (): Promise<void> => this.connection.close();

  // Transaction control runs on the connection directly (`control`), as Kysely's own drivers'
  // did under our former wrapper: the query log and the observers see the queries of a
  // transaction, not its BEGIN and COMMIT.
  beginTransaction = async (): Promise<void> => this.connection.control(BEGIN);
  commitTransaction = async (): Promise<void> => {
    this.connection.control('commit');
    this.onCommit?.();
  };
  /**
   * Kysely's ROLLBACK after a failed write. SQLite has sometimes rolled the transaction back
   * itself by then (SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY on commit): a second ROLLBACK would
   * fail ("no transaction is active") and Kysely would throw that instead of the write's own
   * error, turning a full disk's 507 into a 500. Only a transaction still open is rolled back.
   */
  rollbackTransaction = async (): Promise<void> => {
    if (this.connection.inTransaction) this.connection.control('rollback');
  };
  savepoint = async (_c: DatabaseConnection, name: string): Promise<void> =>
    this.connection.control(savepointSql('savepoint', name));
  rollbackToSavepoint = async (_c: DatabaseConnection, name: string): Promise<void> =>
    this.connection.control(savepointSql('rollback to', name));
  releaseSavepoint = async (_c: DatabaseConnection, name: string): Promise<void> =>
    this.connection.control(savepointSql('release', name));
}

/**
 * better-sqlite3 preparing each distinct statement once. Statements are kept by their SQL text,
 * least recently used out past `maxStatements` (a variable-length `in (…)` list is a statement
 * of its own per length). A prepared statement runs synchronously to completion for `all` and
 * `run`, so reusing it cannot interleave; a streamed query (`iterate`, which outlives the call)
 * gets a statement of its own. A statement that takes the write lock waits for another process
 * holding it through `timedLockWaits`. A refusal a request can provoke is thrown as its
 * catalogue error (refusalOf).
 */
class SqliteConnection implements DatabaseConnection {
  private readonly cache: LRUCache<string, SQLite.Statement>;
  private readonly locking: <T>(writes: boolean, run: () => T) => T;

  constructor(
    private readonly sqlite: SQLite.Database,
    { maxStatements = 500, onLockWait }: SqliteDriverOptions,
  ) {
    this.cache = new LRUCache({ max: maxStatements });
    this.locking = onLockWait ? timedLockWaits(sqlite, onLockWait) : (_w, run) => run();
  }

  get inTransaction(): boolean {
    return this.sqlite.inTransaction;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return this.execute<R>(query.sql, query.parameters);
    } catch (err) {
      throw refusalOf(err) ?? err;
    }
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('SQLite streams select queries only');
    for (const row of this.sqlite.prepare(query.sql).iterate(query.parameters)) yield { rows: [row as R] };
  }

  /** A transaction's BEGIN, COMMIT, ROLLBACK or savepoint. */
  control(sql: string): void {
    this.execute(sql, []);
  }

  close(): void {
    this.cache.clear();
    this.sqlite.close();
  }

  private execute<R>(sql: string, parameters: readonly unknown[]): QueryResult<R> {
    // a pragma acts when it is prepared, not when it runs: kept, it would act once only
    const stmt = PRAGMA.test(sql) ? this.sqlite.prepare(sql) : this.prepared(sql);
    // SQLite calls every BEGIN read-only: this one takes the write lock
    const writes = sql === BEGIN || !stmt.readonly;
    if (stmt.reader) return { rows: this.locking(writes, () => stmt.all(parameters)) as R[] };
    const { changes, lastInsertRowid } = this.locking(writes, () => stmt.run(parameters));
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  private prepared(sql: string): SQLite.Statement {
    let stmt = this.cache.get(sql);
    if (!stmt) {
      stmt = this.sqlite.prepare(sql);
      this.cache.set(sql, stmt);
    }
    return stmt;
  }
}
