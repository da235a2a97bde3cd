import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import type { DbTarget } from '../config.js';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';
import { withStatementCache } from './statement-cache.js';
import { keepSqliteStatistics } from './statistics.js';

export type Db = Kysely<Database>;
export type Dialect = DbTarget['dialect'];

export interface DbHandle {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
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
}

/** A database that cannot be opened, named so the user can act on it. */
export class DatabaseError extends Error {}

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

function openSqlite(path: string, create: boolean): SQLite.Database {
  if (path !== ':memory:' && !create && !existsSync(path)) {
    throw new DatabaseError(
      `no SQLite database at ${path} (check --db / PRODGRAPH_DB; "prodgraph import" or "prodgraph demo" creates one)`,
    );
  }
  let sqlite: SQLite.Database | undefined;
  try {
    if (path !== ':memory:') ownerOnly(path, create);
    sqlite = new SQLite(path, { fileMustExist: !create });
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    // FULL: a commit is on disk (the WAL fsynced) before the write is acknowledged, so it survives
    // a power loss or an OS crash, not only a killed process (NORMAL's promise). SECURITY.md.
    sqlite.pragma('synchronous = FULL');
    return sqlite;
  } catch (err) {
    sqlite?.close();
    throw new DatabaseError(`cannot open the SQLite database ${path}: ${(err as Error).message}`);
  }
}

const INT8 = 20;

export function openDatabase(target: DbTarget, options: DbOptions = {}): DbHandle {
  const log = options.onQuery ? (e: LogEvent) => options.onQuery!(e) : undefined;
  if (target.dialect === 'sqlite') {
    const sqlite = openSqlite(target.path, options.create ?? true);
    const beforeClose = keepSqliteStatistics(sqlite);
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
      log,
    });
    return {
      db,
      dialect: 'sqlite',
      close: () => {
        beforeClose();
        return db.destroy();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: target.url,
    max: options.poolSize ?? 10,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
    // counts and sizes come back as int8; every value we store fits a JS number
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

export async function migrate(db: Db, dialect: Dialect): Promise<void> {
  // Kysely looks for its bookkeeping tables across every schema it can see; pin them to ours
  // so another schema's migrations (a second install, a parallel test) are never mistaken for ours.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
      : undefined;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // migrations come from parallel lines of work; a database that ran a later-numbered one
    // first must still take an earlier-numbered one that arrived after it
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  let { error, results } = await migrator.migrateToLatest();
  // Kysely's migrator looks for its tables through an introspection of every schema in the
  // database; a schema another client drops meanwhile (another install's, a parallel test's)
  // makes that query fail although nothing of ours is wrong. Look again a few times.
  for (let attempt = 0; attempt < 5 && error && droppedElsewhere(error, schema); attempt++) {
    await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    ({ error, results } = await migrator.migrateToLatest());
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '));
  }
}

/** Whether a migration failed only because some other schema vanished while it was introspected. */
function droppedElsewhere(error: unknown, ours: string | undefined): boolean {
  const m = /^schema "([^"]+)" does not exist$/.exec(error instanceof Error ? error.message : '');
  return m !== null && m[1] !== ours;
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
