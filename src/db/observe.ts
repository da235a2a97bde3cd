import type { LogEvent } from 'kysely';

/**
 * What the database layer tells whoever watches it (the metrics, the logs), without knowing who
 * does: every query with its duration, how long a query waited for a PostgreSQL connection, and
 * connections lost outside any query.
 */
export interface DbObserver {
  /** A query ran (or failed) in `durationMs`, the wait for a connection excluded. */
  query?(sql: string, durationMs: number, failed: boolean): void;
  /** PostgreSQL: a query waited this long for a connection (a new one, or a free one of a full pool). */
  poolWait?(durationMs: number, failed: boolean): void;
  /**
   * SQLite: a statement waited this long for the write lock another process held (its busy
   * wait, timedLockWaits); `acquired` false when it gave up with SQLITE_BUSY.
   */
  busyWait?(durationMs: number, acquired: boolean): void;
  /**
   * PostgreSQL: a connection was lost outside any query (PostgreSQL restarted, a connection cut
   * while idle in the pool); the pool dropped it and connects afresh on the next query.
   */
  connectionLost?(err: Error): void;
  /**
   * Writes through the one write path committed: `groupSize` writes in one transaction (1 each
   * until writes are committed in groups).
   */
  committed?(groupSize: number): void;
  /** A transaction committed (each COMMIT the driver ran: a group of writes is one). */
  transactionCommitted?(): void;
}

/** How busy the PostgreSQL pool is right now. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** The observers of one database handle. */
export class Observers {
  private readonly all = new Set<DbObserver>();

  add(observer: DbObserver): () => void {
    this.all.add(observer);
    return () => this.all.delete(observer);
  }

  /** Kysely's `log` callback: hands every query to the observers (and to `also`, the tests' counter). */
  log(also?: (event: LogEvent) => void): (event: LogEvent) => void {
    return (event) => {
      also?.(event);
      for (const o of this.all)
        o.query?.(event.query.sql, event.queryDurationMillis, event.level === 'error');
    };
  }

  poolWait(durationMs: number, failed: boolean): void {
    for (const o of this.all) o.poolWait?.(durationMs, failed);
  }

  busyWait(durationMs: number, acquired: boolean): void {
    for (const o of this.all) o.busyWait?.(durationMs, acquired);
  }

  connectionLost(err: Error): void {
    for (const o of this.all) o.connectionLost?.(err);
  }

  committed(groupSize: number): void {
    for (const o of this.all) o.committed?.(groupSize);
  }

  transactionCommitted(): void {
    for (const o of this.all) o.transactionCommitted?.();
  }
}

/** The observers of each open database, found from its Kysely instance (the write path has only that). */
const byDb = new WeakMap<object, Observers>();

export function registerObservers(db: object, observers: Observers): void {
  byDb.set(db, observers);
}

export function observersOf(db: object): Observers | undefined {
  return byDb.get(db);
}
