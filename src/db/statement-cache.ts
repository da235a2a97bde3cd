import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { LRUCache } from 'lru-cache';
import { timedLockWaits } from './busy-wait.js';

const PRAGMA = /^\s*pragma\b/i;

/**
 * better-sqlite3 behind Kysely, preparing each distinct statement once (bench/FINDINGS.md §2):
 * Kysely's SQLite driver prepares every query anew, which cost as much as running it for the
 * key lookup every request makes, and most of a multi-row INSERT's time for the storage
 * events. Statements are kept by their SQL text, least recently used out past `max` (a
 * variable-length `in (…)` list is a statement of its own per length). A prepared statement
 * runs synchronously to completion for `all` and `run`, so reusing it cannot interleave; a
 * streamed query (`iterate`, which outlives the call) gets a statement of its own. A statement
 * that takes the write lock waits for another process holding it through `timedLockWaits`,
 * which reports each wait to `onLockWait`.
 */
export function withStatementCache(
  sqlite: SQLite.Database,
  {
    max = 500,
    onLockWait,
  }: { max?: number; onLockWait?: (durationMs: number, acquired: boolean) => void } = {},
): SqliteDatabase {
  const locking = onLockWait ? timedLockWaits(sqlite, onLockWait) : <T>(_w: boolean, run: () => T) => run();
  const cache = new LRUCache<string, SQLite.Statement>({ max });
  const prepared = (sql: string): SQLite.Statement => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = sqlite.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare(sql: string): SqliteStatement {
      if (sql === 'rollback') return rollback(sqlite);
      // Kysely's BEGIN: every transaction the service opens on SQLite writes, so it takes the
      // write lock as it begins (src/db/busy-wait.ts says why)
      const text = sql === 'begin' ? 'begin immediate' : sql;
      // a pragma acts when it is prepared, not when it runs: kept, it would act once only
      const stmt = PRAGMA.test(text) ? sqlite.prepare(text) : prepared(text);
      const writes = text === 'begin immediate' || !stmt.readonly;
      return {
        reader: stmt.reader,
        all: (parameters) => locking(writes, () => stmt.all(parameters)),
        run: (parameters) => locking(writes, () => stmt.run(parameters)),
        iterate: (parameters) => sqlite.prepare(sql).iterate(parameters),
      };
    },
  };
}

/**
 * Kysely's ROLLBACK after a failed write. SQLite has sometimes rolled the transaction back
 * itself by then (SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY on commit): a second ROLLBACK would
 * fail ("no transaction is active") and Kysely would throw that instead of the write's own
 * error, turning a full disk's 507 into a 500. Only a transaction still open is rolled back.
 */
function rollback(sqlite: SQLite.Database): SqliteStatement {
  const run = () =>
    sqlite.inTransaction ? sqlite.prepare('rollback').run() : { changes: 0, lastInsertRowid: 0 };
  return { reader: false, all: () => (run(), []), run, iterate: () => [][Symbol.iterator]() };
}
