import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, sql, type LogEvent } from 'kysely';
import type { DbTarget } from '../config.js';
import { UserError } from '../errors.js';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';
import { Observers, registerObservers, type DbObserver, type PoolStats } from './observe.js';
import { BUSY_TIMEOUT_MS } from './driver/busy-wait.js';
import { sqliteDialect } from './driver/sqlite.js';
import { postgresDialect } from './driver/postgres.js';
import { CommitListener } from './commit-listener.js';
import { keepSqliteStatistics } from './statistics.js';

export type Db = Kysely<Database>;
export type Dialect = DbTarget['dialect'];

export interface DbHandle {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
  /** Tells `observer` of every query, connection wait and lost connection from now on; answers the unsubscribe. */
  observe(observer: DbObserver): () => void;
  /** PostgreSQL: the pool's connections right now; SQLite (one connection): null. */
  poolStats(): PoolStats | null;
  /**
   * PostgreSQL: a listener of the schema's commit announcements on a connection of its own
   * (started by the caller, who closes it); SQLite: null, nothing announces commits there.
   */
  commitListener(onError: (err: unknown) => void): CommitListener | null;
}

export interface DbOptions {
  /** Every executed query is reported here (tests count them). */
  onQuery?: (event: LogEvent) => void;
  /** PostgreSQL only: the schema to work in (tests isolate each file in its own). */
  schema?: string;
  poolSize?: number;
  /**
   * SQLite only: whether a missing database file (and its folder) may be created. Only the
   * commands that build a database (serve, import, demo) say yes; the rest refuse a mistyped path.
   */
  create?: boolean;
  /** PostgreSQL only: how long a query waits for a connection (a new one, or a free one of a full pool). */
  connectTimeoutMs?: number;
}

/** The default wait for a PostgreSQL connection: long enough for a busy pool, short enough that an outage answers 503 promptly. */
export const PG_CONNECT_TIMEOUT_MS = 5000;

/** A database that cannot be opened, named so the user can act on it. */
export class DatabaseError extends UserError {
  constructor(detail: string) {
    super(detail, 'unavailable');
  }
}

/**
 * The database holds a production's unreleased material: its folder (when we make it) and its
 * file are the owner's alone. SQLite gives the -wal and -shm files the database file's mode, so
 * creating the file 0600 before SQLite opens it covers all three; a file made by an older
 * version with a wider mode is narrowed.
 */
function ownerOnly(path: string, create: boolean): void {
  if (create) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (create && !existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600);
    } catch {
      // missing (no WAL yet) or not ours to change: SQLite's own open reports what matters
    }
  }
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Refuses, before anything is opened or changed, a path that cannot be a database: a folder,
 * a file that is not SQLite's (SQLite itself would only say so after we had narrowed the
 * file's mode), or an empty file when the command may not create a database (only then is an
 * empty file one to build the database in; otherwise it would be narrowed and migrated by a
 * command that only reads).
 */
function refuseNonDatabase(path: string, create: boolean): void {
  let s;
  try {
    s = statSync(path);
  } catch {
    return; // missing: the create rule decides
  }
  if (s.isDirectory()) {
    throw new DatabaseError(
      `${path} is a folder, not a SQLite database file (name a file, e.g. ${path.replace(/\/+$/, '')}/prodgraph.db; nothing was changed)`,
    );
  }
  if (s.size === 0) {
    if (create) return;
    throw new DatabaseError(
      `${path} is an empty file, not a prodgraph database ("prodgraph import" or "prodgraph demo" builds one in it; nothing was changed)`,
    );
  }
  const head = Buffer.alloc(SQLITE_HEADER.length);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    readSync(fd, head, 0, head.length, 0);
  } catch (err) {
    throw new DatabaseError(`cannot open the SQLite database ${path}: ${(err as Error).message}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (!head.equals(SQLITE_HEADER)) {
    throw new DatabaseError(
      `cannot open the SQLite database ${path}: file is not a database (nothing was changed)`,
    );
  }
}

/** A SQLite file with tables but none of our migrations belongs to another program: leave it be. */
function refuseForeignTables(sqlite: SQLite.Database, path: string): void {
  const tables = sqlite
    .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
    .pluck()
    .all() as string[];
  if (tables.length > 0 && !tables.includes('kysely_migration')) {
    throw new DatabaseError(
      `${path} is a SQLite database of another program (tables ${tables.slice(0, 3).join(', ')}${tables.length > 3 ? ', …' : ''}), not prodgraph's; nothing was changed`,
    );
  }
}

function openSqlite(path: string, create: boolean): SQLite.Database {
  if (path !== ':memory:' && !create && !existsSync(path)) {
    throw new DatabaseError(
      `no SQLite database at ${path} (check --db / PRODGRAPH_DB; "prodgraph import" or "prodgraph demo" creates one)`,
    );
  }
  if (path !== ':memory:') refuseNonDatabase(path, create);
  let sqlite: SQLite.Database | undefined;
  try {
    if (path !== ':memory:' && create && !existsSync(path)) ownerOnly(path, create);
    sqlite = new SQLite(path, { fileMustExist: !create });
    if (path !== ':memory:') {
      refuseForeignTables(sqlite, path);
      // known to be ours (or new): now its mode may be narrowed
      ownerOnly(path, false);
    }
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    // a write waits this long for another process's write lock (timedLockWaits times it)
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // FULL: a commit is on disk (the WAL fsynced) before the write is acknowledged, so it survives
    // a power loss or an OS crash, not only a killed process (NORMAL's promise). SECURITY.md.
    sqlite.pragma('synchronous = FULL');
    return sqlite;
  } catch (err) {
    sqlite?.close();
    if (err instanceof DatabaseError) throw err;
    throw new DatabaseError(`cannot open the SQLite database ${path}: ${(err as Error).message}`);
  }
}

const INT8 = 20;

export function openDatabase(target: DbTarget, options: DbOptions = {}): DbHandle {
  const observers = new Observers();
  const log = observers.log(options.onQuery);
  if (target.dialect === 'sqlite') {
    const sqlite = openSqlite(target.path, options.create ?? true);
    const beforeClose = keepSqliteStatistics(sqlite);
    const db = new Kysely<Database>({
      dialect: sqliteDialect(sqlite, {
        onLockWait: (ms, acquired) => observers.busyWait(ms, acquired),
        onCommit: () => observers.transactionCommitted(),
      }),
      log,
    });
    registerObservers(db, observers);
    return {
      db,
      dialect: 'sqlite',
      close: () => {
        beforeClose();
        return db.destroy();
      },
      observe: (o) => observers.add(o),
      poolStats: () => null,
      commitListener: () => null,
    };
  }
  return openPostgres(target.url, options, observers, log);
}

function openPostgres(
  url: string,
  options: DbOptions,
  observers: Observers,
  log: (e: LogEvent) => void,
): DbHandle {
  const max = options.poolSize ?? 10;
  const settings: pg.PoolConfig = {
    connectionString: url,
    max,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
    // how pg_stat_activity names our connections unless the URL's ?application_name= (or
    // PGAPPNAME) names them otherwise, e.g. one name per server
    fallback_application_name: 'prodgraph',
    // waiting for a connection is bounded: while PostgreSQL is away a request is refused, not held
    connectionTimeoutMillis: options.connectTimeoutMs ?? PG_CONNECT_TIMEOUT_MS,
    // a peer that vanished without closing (a cut network) is noticed instead of waited on for ever
    keepAlive: true,
    // counts and sizes come back as int8; every value we store fits a JS number
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8
          ? (v: string) => Number(v)
          : (pg.types.getTypeParser(oid, format) as (v: string) => unknown)) as typeof pg.types.getTypeParser,
    },
  };
  const pool = new pg.Pool(settings);
  // An idle connection that PostgreSQL ends (57P01 on a restart) is an 'error' event on the pool;
  // unheard, Node ends the process. The pool has already dropped it and reconnects on demand.
  pool.on('error', (err) => observers.connectionLost(err));
  // A connection cut while checked out between two queries (a transaction waiting on a file)
  // emits 'error' on the client itself, where the pool listens only while it is idle: heard here
  // too, so it never ends the process; the query that comes next fails and the pool drops it.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({
    dialect: postgresDialect(pool, {
      onPoolWait: (ms, failed) => observers.poolWait(ms, failed),
      onCommit: () => observers.transactionCommitted(),
    }),
    log,
  });
  registerObservers(db, observers);
  return {
    db,
    dialect: 'postgres',
    close: () => db.destroy(),
    observe: (o) => observers.add(o),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    // the pool's own settings: the same server, schema and type parsers
    commitListener: (onError) => new CommitListener(() => new pg.Client(settings), onError),
  };
}

async function migratorFor(db: Db, dialect: Dialect): Promise<Migrator> {
  // Kysely looks for its bookkeeping tables by schema; pin them to ours so another schema's
  // migrations (a second install, a parallel test) are never mistaken for ours. What it looks
  // through is ours alone too (CurrentSchemaIntrospector), so another schema dropped meanwhile
  // is unseen.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
      : undefined;
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // migrations come from parallel lines of work; a database that ran a later-numbered one
    // first must still take an earlier-numbered one that arrived after it
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

/**
 * Where a database stands without changing it: `empty` (no prodgraph tables yet), `behind`
 * (migrations to run) or `current`. For commands that promise to change nothing (--plan).
 */
export async function migrationState(db: Db, dialect: Dialect): Promise<'empty' | 'behind' | 'current'> {
  const all = await (await migratorFor(db, dialect)).getMigrations();
  const done = all.filter((m) => m.executedAt !== undefined).length;
  return done === 0 ? 'empty' : done < all.length ? 'behind' : 'current';
}

export async function migrate(db: Db, dialect: Dialect): Promise<void> {
  const { error, results } = await (await migratorFor(db, dialect)).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '));
  }
}

export async function openAndMigrate(target: DbTarget, options: DbOptions = {}): Promise<DbHandle> {
  const handle = openDatabase(target, options);
  try {
    await migrate(handle.db, handle.dialect);
  } catch (err) {
    await handle.close();
    // SQLite's own words ("file is not a database") do not say which file
    if (target.dialect === 'sqlite') {
      throw new DatabaseError(`SQLite database ${target.path}: ${(err as Error).message}`);
    }
    throw err;
  }
  return handle;
}
