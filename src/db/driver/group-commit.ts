import { sql, type ControlledTransaction } from 'kysely';
import { recordChanges, type ChangeLog, type WriteScope } from '../change-log.js';
import { announceCommit } from '../change-signal.js';
import { onPostgres } from './kysely-surface.js';
import type { Db } from '../index.js';
import { observersOf } from '../observe.js';
import type { Database } from '../schema.js';
import type { Deferred } from '../write-hooks.js';

/*
 * Group commit: writes to one production that arrive together share one transaction and so one
 * COMMIT (one fsync of SQLite's WAL, one WAL flush of PostgreSQL), yet each keeps its own
 * transaction semantics. Each write runs in a SAVEPOINT of the shared transaction; a write that
 * fails (a refusal, a constraint, an idempotent replay) rolls back to its savepoint only and the
 * others are untouched. No write is answered before the COMMIT: if the COMMIT fails, every write
 * of the group fails with its error, and nothing of any of them is left (no half-state).
 *
 * On PostgreSQL a savepoint is a round trip per write, so a group first runs its writes without
 * any: should one of them fail, the whole attempt is rolled back (nothing of it was seen by
 * anyone) and the same writes, in the same order, run again at once with a savepoint each, as on
 * SQLite. A write is a function of the database it is given, so running it twice in a
 * transaction rolled back in between writes it once. A refusal thus costs its group a second
 * run; a group without one, the common case, saves a round trip per write.
 *
 * "Together" means: queued while the previous group of the same production was running or
 * committing, or queued in the same turn of the event loop. A group starts on `setImmediate`, so
 * every request the loop read in its last poll reaches the queue first; on SQLite the fsync
 * blocks the loop, so the requests that arrive meanwhile form the next group. A write arriving
 * to an idle queue waits for no timer: it commits at the end of the turn it arrived in.
 *
 * It sits beside our drivers rather than inside one: a Kysely Driver is handed one transaction
 * per caller and cannot merge them, so the committer takes a ControlledTransaction of its own and
 * hands it to each write. What it needs of the drivers is held by the driver test: a COMMIT per
 * group (transactionCommitted), and on PostgreSQL a text without parameters sent as one simple
 * query, which may hold two statements (NEXT_SAVEPOINT).
 */

/** A group holds at most this many writes, so the first of them waits a bounded time. */
export const MAX_GROUP = 256;

/** What a write reports to its group once its statements have run. */
export interface WriteOutcome<T> {
  result: T;
  scope: WriteScope;
  /** Recorded (and the revision bumped) with the group's, after its last write (recordChanges). */
  changes: ChangeLog;
}

interface Job {
  /** `defer` (PostgreSQL only) leaves a statement to the group's end (see Deferred). */
  work(trx: Db, defer?: (statement: Deferred) => void): Promise<WriteOutcome<unknown>>;
  resolve(result: unknown): void;
  reject(err: unknown): void;
}

type Trx = ControlledTransaction<Database, string[]>;
type Settled =
  | {
      job: Job;
      ok: true;
      outcome: WriteOutcome<unknown>;
      deferred: Deferred[];
      revision?: number | null;
    }
  | { job: Job; ok: false; error: unknown };

/** Thrown to the other writes of a group whose transaction was lost under one of them. */
export class GroupLost extends Error {
  constructor(cause: unknown) {
    super('the transaction this write shared was lost; nothing of it was written', { cause });
  }
}

/** runWrites' answer when a write failed in a group run without savepoints. */
const RUN_AGAIN = Symbol('run the group again, with savepoints');

const SET_SAVEPOINT = 'savepoint "prodgraph_write"';
const RELEASE_SAVEPOINT = 'release savepoint "prodgraph_write"';
const NEXT_SAVEPOINT = `${RELEASE_SAVEPOINT}; ${SET_SAVEPOINT}`;
const ROLLBACK_TO_SAVEPOINT = 'rollback to savepoint "prodgraph_write"';

class GroupCommitter {
  private readonly queue: Job[] = [];
  /** A group is running its writes (at most one at a time; others may be committing). */
  private open = false;
  private scheduled = false;
  /** PostgreSQL: the running group's last savepoint is still set (released by the next, or COMMIT). */
  private savepointOpen = false;
  private readonly postgres: boolean;

  constructor(private readonly db: Db) {
    this.postgres = onPostgres(db);
  }

  submit<T>(work: (trx: Db, defer?: (statement: Deferred) => void) => Promise<WriteOutcome<T>>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve, reject });
      this.schedule();
    });
  }

  /** Starts a group at the end of this turn of the event loop, unless one is taking writes. */
  private schedule(): void {
    if (this.open || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.runGroup().catch((err: unknown) => {
        // a fault of the committer itself: no queued write may wait for ever
        for (const job of this.queue.splice(0)) job.reject(err);
      });
    });
  }

  private async runGroup(): Promise<void> {
    if (this.open || this.queue.length === 0) return;
    this.open = true;
    // SQLite's savepoints are calls in process: it always runs a group with them
    let careful = !this.postgres;
    for (;;) {
      let trx: Trx;
      try {
        trx = await this.db.startTransaction().execute();
      } catch (err) {
        // no transaction to be had (PostgreSQL away, the pool's wait timed out): every write
        // waiting now would have waited for it alone and failed alike
        for (const job of this.queue.splice(0)) job.reject(err);
        this.open = false;
        return;
      }
      const settled: Settled[] = [];
      let lost: unknown = null;
      let again = false;
      try {
        const outcome = await this.runWrites(trx, settled, careful);
        if (outcome === RUN_AGAIN) again = true;
        else lost = outcome;
      } finally {
        // The next group may run its writes while this one records its changes and commits. Its
        // writes wait for no lock of this group's tail: the revision row is locked only there,
        // and the rest of the tail touches nothing but this group's own rows.
        if (!again) {
          this.open = false;
          this.schedule();
        }
      }
      if (again) {
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
        // the same writes first, in their order, each in a savepoint this time
        this.queue.unshift(...settled.map((s) => s.job));
        careful = true;
        continue;
      }
      await this.finish(trx, settled, lost);
      return;
    }
  }

  /** Records the group's changes and commits, or rolls it back; then answers every write. */
  private async finish(trx: Trx, settled: Settled[], lost: unknown): Promise<void> {
    if (lost === null) lost = await this.recordChanges(trx, settled);
    if (lost !== null) {
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      for (const s of settled) s.job.reject(s.ok ? new GroupLost(lost) : s.error);
      return;
    }
    try {
      await trx.commit().execute();
    } catch (err) {
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      for (const s of settled) s.job.reject(err);
      return;
    }
    this.acknowledge(settled);
  }

  /** The group's revisions and change rows, as its last statements; answers what lost it, or null. */
  private async recordChanges(trx: Trx, settled: Settled[]): Promise<unknown> {
    const ok = settled.filter((s): s is Extract<Settled, { ok: true }> => s.ok);
    if (ok.length === 0) return null;
    try {
      await flushDeferred(
        trx,
        ok.flatMap((s) => s.deferred),
      );
      const revisions = await recordChanges(
        trx,
        ok.map((s) => s.outcome),
      );
      ok.forEach((s, i) => (s.revision = revisions[i] ?? null));
      return null;
    } catch (err) {
      return err;
    }
  }

  /**
   * Runs queued writes one after another in `trx` (writes queued meanwhile join). Careful, each
   * runs in a savepoint; else none does, and a failure asks for the group to run again
   * (RUN_AGAIN, every write it took left in `settled`). The first write of a group with nobody
   * behind it needs no savepoint either way: if it fails, the whole transaction is rolled back
   * and the group ends there. Answers the error that lost the shared transaction, or null.
   */
  private async runWrites(trx: Trx, settled: Settled[], careful: boolean): Promise<unknown> {
    this.savepointOpen = false;
    while (settled.length < MAX_GROUP) {
      const job = this.queue.shift();
      if (!job) break;
      const alone = settled.length === 0 && this.queue.length === 0;
      if (alone || !careful) {
        try {
          const deferred: Deferred[] = [];
          const outcome = await job.work(trx, this.deferTo(deferred));
          settled.push({ job, ok: true, outcome, deferred });
        } catch (error) {
          settled.push({ job, ok: false, error });
          if (alone) return error; // its own failure: the transaction it had alone is rolled back
          return RUN_AGAIN;
        }
        continue;
      }
      const outcome = await this.inSavepoint(trx, job);
      settled.push(outcome.settled);
      if (outcome.lost !== null) return outcome.lost;
    }
    return null;
  }

  /**
   * One write in a savepoint of the group's transaction; a failure rolls back to it, and only a
   * transaction lost meanwhile is reported as `lost`. On PostgreSQL every statement is a round
   * trip, so a savepoint is not released on its own: the next write releases it and sets its own
   * in one round trip (a simple query of two statements), and COMMIT releases the last. SQLite
   * runs statements in process, one at a time, and releases each.
   */
  private async inSavepoint(trx: Trx, job: Job): Promise<{ settled: Settled; lost: unknown }> {
    try {
      await sql.raw(this.savepointOpen ? NEXT_SAVEPOINT : SET_SAVEPOINT).execute(trx);
      this.savepointOpen = this.postgres;
    } catch (err) {
      return { settled: { job, ok: false, error: err }, lost: err };
    }
    try {
      const deferred: Deferred[] = [];
      const outcome = await job.work(trx, this.deferTo(deferred));
      if (!this.postgres) await sql.raw(RELEASE_SAVEPOINT).execute(trx);
      return { settled: { job, ok: true, outcome, deferred }, lost: null };
    } catch (error) {
      try {
        await sql.raw(ROLLBACK_TO_SAVEPOINT).execute(trx);
        if (!this.postgres) await sql.raw(RELEASE_SAVEPOINT).execute(trx);
        return { settled: { job, ok: false, error }, lost: null };
      } catch {
        // the transaction itself is gone (SQLite rolls back on a full disk or an I/O error;
        // PostgreSQL's connection was cut): so is every write before this one
        return { settled: { job, ok: false, error }, lost: error };
      }
    }
  }

  /**
   * PostgreSQL: a write's deferrable statements wait for the group's end, one round trip for the
   * group instead of one per write. SQLite runs statements in process: each runs in its write.
   */
  private deferTo(list: Deferred[]): ((statement: Deferred) => void) | undefined {
    return this.postgres ? (statement) => list.push(statement) : undefined;
  }

  /** Committed: answer every write, count the group, and wake the feed and the webhooks. */
  private acknowledge(settled: Settled[]): void {
    const committed = settled.filter((s) => s.ok);
    if (committed.length > 0) observersOf(this.db)?.committed(committed.length);
    // the newest revision per production: one wake-up covers all its writes (a woken reader reads every change after its cursor)
    const changed = new Map<number, number>();
    for (const s of settled) {
      if (!s.ok) {
        s.job.reject(s.error);
        continue;
      }
      const { productionId } = s.outcome.scope;
      if (s.revision !== null && s.revision !== undefined)
        changed.set(productionId, Math.max(changed.get(productionId) ?? 0, s.revision));
      s.job.resolve(s.outcome.result);
    }
    for (const [productionId, revision] of changed) announceCommit(this.db, productionId, revision);
  }
}

/** The statements the writes of a group deferred: one flush call per kind, rows in the writes' order. */
async function flushDeferred(trx: Db, deferred: Deferred[]): Promise<void> {
  const byFlush = new Map<Deferred['flush'], unknown[]>();
  for (const { flush, row } of deferred) {
    const rows = byFlush.get(flush) ?? [];
    rows.push(row);
    byFlush.set(flush, rows);
  }
  for (const [flush, rows] of byFlush) await flush(trx, rows);
}

/** One committer per database handle and production: a production's groups commit in order. */
const committers = new WeakMap<Db, Map<number, GroupCommitter>>();

export function committerFor(db: Db, productionId: number): GroupCommitter {
  let byProduction = committers.get(db);
  if (!byProduction) {
    byProduction = new Map();
    committers.set(db, byProduction);
  }
  let committer = byProduction.get(productionId);
  if (!committer) {
    committer = new GroupCommitter(db);
    byProduction.set(productionId, committer);
  }
  return committer;
}
