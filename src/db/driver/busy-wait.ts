import type SQLite from 'better-sqlite3';

/** How long a SQLite statement waits for another connection's write lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/** SQLite's lock errors that waiting can resolve (a stale snapshot, SQLITE_BUSY_SNAPSHOT, cannot). */
const waitable = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY') && code !== 'SQLITE_BUSY_SNAPSHOT';
};

/**
 * SQLite's busy waits, timed. Another process writing the same file (a CLI import, a second
 * server) holds the one write lock, and a writer waits for it inside SQLite's busy handler
 * (`busy_timeout`). Two things follow from how SQLite decides to wait:
 *
 * - A transaction that read before its first write is never made to wait: SQLite answers
 *   SQLITE_BUSY at once (waiting could not help: the other writer's commit would leave its
 *   snapshot stale). Every transaction the service opens writes, and most read first (a
 *   service checks, then writes), so on SQLite each begins `BEGIN IMMEDIATE`
 *   (sqliteDialect): the lock is taken, and waited for, at its start.
 * - The wait itself happens inside SQLite, where better-sqlite3 lets nothing observe it. So a
 *   statement that takes the lock (that BEGIN, or a write outside a transaction) is first tried
 *   without waiting (`busy_timeout = 0`, next to free); only when SQLite answers SQLITE_BUSY is it
 *   run again with the usual timeout, and that wait is reported (`acquired` false when it ended
 *   in SQLITE_BUSY after all). The retry is what the busy handler would have done: the refused
 *   statement changed nothing (when SQLite rolled a transaction back instead, the error is
 *   thrown as it is). A statement of a transaction that holds the lock already, and a read
 *   (WAL: readers take no lock), are run as they are.
 */
export function timedLockWaits(
  sqlite: SQLite.Database,
  report: (durationMs: number, acquired: boolean) => void,
): <T>(writes: boolean, execute: () => T) => T {
  // whether this connection holds the write lock: it wrote in the transaction still open
  let holding = false;
  return (writes, execute) => {
    const inTransaction = sqlite.inTransaction;
    if (!inTransaction) holding = false;
    if (!writes || holding) return execute();
    let refused: unknown;
    // a pragma prepared once would take effect when prepared, not when run: exec'd each time
    sqlite.exec('pragma busy_timeout = 0');
    try {
      const result = execute();
      holding = sqlite.inTransaction;
      return result;
    } catch (err) {
      refused = err;
    } finally {
      sqlite.exec(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    if (!waitable(refused) || sqlite.inTransaction !== inTransaction) throw refused;
    const started = performance.now();
    try {
      const result = execute();
      report(performance.now() - started, true);
      holding = sqlite.inTransaction;
      return result;
    } catch (err) {
      report(performance.now() - started, !waitable(err));
      throw err;
    }
  };
}
