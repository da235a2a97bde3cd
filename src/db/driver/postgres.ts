import {
  CompiledQuery,
  PostgresAdapter,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { refusalOf } from '../refusals.js';
import { CurrentSchemaIntrospector } from './introspection.js';
import { savepointSql, type TransactionCounter } from './shared.js';
import { statementName } from './statement-names.js';

export interface PostgresDriverOptions {
  /** A query waited this long for a connection (a new one, or a free one of a full pool). */
  onPoolWait?: (durationMs: number, failed: boolean) => void;
  /** A transaction committed (a COMMIT this driver ran). */
  onCommit?: TransactionCounter;
}

/**
 * Our PostgreSQL dialect: Kysely's adapter and compiler, our introspector (the current schema
 * only: CurrentSchemaIntrospector) and a driver of ours over a pg pool. Kysely's own driver
 * hands pg every query as `client.query(text, values)`, unnamed, so PostgreSQL parses and plans
 * it on every run; ours runs the statements marked or repeated (statementName) by name, which pg
 * prepares once per connection and reuses after. Owning the call is what lets us name them
 * without patching the pool's clients.
 */
export function postgresDialect(pool: pg.Pool, options: PostgresDriverOptions = {}): Dialect {
  return {
    createDriver: (): Driver => new PostgresDriver(pool, options),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createAdapter: () => new PostgresAdapter(),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own signature
    createIntrospector: (db: Kysely<any>) => new CurrentSchemaIntrospector(db),
  };
}

class PostgresDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, PostgresConnection>();
  private pool: pg.Pool | undefined;

  constructor(
    pool: pg.Pool,
    private readonly options: PostgresDriverOptions,
  ) {
    this.pool = pool;
  }

  init = async (): Promise<void> => undefined;

  /** A connection of the pool; the wait for it is timed (onPoolWait). */
  acquireConnection = async (): Promise<DatabaseConnection> => {
    const pool = this.pool;
    if (!pool) throw new Error('the database has been closed');
    const started = performance.now();
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      this.options.onPoolWait?.(performance.now() - started, true);
      throw err;
    }
    this.options.onPoolWait?.(performance.now() - started, false);
    if (!this.pool) {
      client.release();
      throw new Error('the database has been closed');
    }
    let connection = this.connections.get(client);
    if (!connection) this.connections.set(client, (connection = new PostgresConnection(client)));
    return connection;
  };

  releaseConnection = async (c: DatabaseConnection): Promise<void> =>
    (c as PostgresConnection).client.release();

  destroy = async (): Promise<void> => {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  };

  // Transaction control runs on the connection directly (`control`): the query log and the
  // observers see the queries of a transaction, not its BEGIN and COMMIT (as before this driver).
  beginTransaction = async (c: DatabaseConnection, settings: TransactionSettings): Promise<void> => {
    const { isolationLevel, accessMode } = settings;
    const modes = [isolationLevel && `isolation level ${isolationLevel}`, accessMode].filter(Boolean);
    await control(c, modes.length > 0 ? `start transaction ${modes.join(' ')}` : 'begin');
  };
  commitTransaction = async (c: DatabaseConnection): Promise<void> => {
    await control(c, 'commit');
    this.options.onCommit?.();
  };
  rollbackTransaction = async (c: DatabaseConnection): Promise<void> => control(c, 'rollback');
  savepoint = async (c: DatabaseConnection, name: string): Promise<void> =>
    control(c, savepointSql('savepoint', name));
  rollbackToSavepoint = async (c: DatabaseConnection, name: string): Promise<void> =>
    control(c, savepointSql('rollback to', name));
  releaseSavepoint = async (c: DatabaseConnection, name: string): Promise<void> =>
    control(c, savepointSql('release', name));
}

const control = async (c: DatabaseConnection, sql: string): Promise<void> => {
  await (c as PostgresConnection).run(sql, []);
};

const COUNTED = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** One pooled client. A refusal a request can provoke is thrown as its catalogue error (refusalOf). */
class PostgresConnection implements DatabaseConnection {
  constructor(readonly client: pg.PoolClient) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.run<R>(query.sql, query.parameters);
    } catch (err) {
      throw refusalOf(err) ?? withCallerStack(err);
    }
  }

  // eslint-disable-next-line require-yield -- nothing streams on PostgreSQL (no cursor configured)
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not configured for PostgreSQL');
  }

  /** Runs `text` by its statement's name when it has one (statementName), else unnamed. */
  async run<R>(text: string, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    const values = [...parameters];
    const name = statementName(text, values);
    const result = await (name === undefined
      ? this.client.query(text, values)
      : this.client.query({ name, text, values }));
    return {
      numAffectedRows: COUNTED.has(result.command) ? BigInt(result.rowCount ?? 0) : undefined,
      rows: (result.rows ?? []) as R[],
    };
  }
}

/** pg's error carries the stack of its socket's reader: the query's caller is added, as Kysely's driver did. */
function withCallerStack(err: unknown): unknown {
  const caller = new Error().stack?.split('\n').slice(1).join('\n');
  if (err instanceof Error && typeof err.stack === 'string' && caller) err.stack += `\n${caller}`;
  return err;
}
