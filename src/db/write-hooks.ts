import { ChangeLog, recordChanges, type WriteScope } from './change-log.js';
import { announceCommit } from './change-signal.js';
import type { Db } from './index.js';
import { committerFor, type WriteOutcome } from './driver/group-commit.js';
import { observersOf } from './observe.js';
import { stampUpdatedAt } from './updated-at.js';

export type { WriteScope } from './change-log.js';

/**
 * Lets a caller take part in a write's transaction without the service knowing why: the
 * HTTP layer uses it for Idempotency-Key bookkeeping, so the record of a write and the
 * write itself commit (or roll back) together.
 */
export interface WriteHooks<T> {
  /** Runs first inside the transaction; throwing aborts the write before anything is written. */
  begin(trx: Db): Promise<void>;
  /**
   * Runs last inside the transaction, with the write's result. Given `defer`, it may hand its
   * statement to the write's group instead of running it (see Deferred).
   */
  end(trx: Db, result: T, defer?: (statement: Deferred) => void): Promise<void>;
}

/**
 * A write's last statement left to its group: the rows every write of a group deferred to one
 * `flush` are written by one call of it, at the group's end, in the shared transaction and before
 * its COMMIT, and only for the writes that succeeded. On PostgreSQL a statement is a round trip,
 * and one for the group is cheaper than one per write.
 */
export interface Deferred<R = unknown> {
  flush(this: void, trx: Db, rows: R[]): Promise<void>;
  row: R;
}

/**
 * The one write path: one transaction, the caller's hooks around the write, and the write's
 * change log recorded last (bumping the production's revision). Every service that changes a
 * production goes through here.
 *
 * Writes to a known production are group-committed (committerFor): writes arriving
 * together share one transaction and one COMMIT, each in its own savepoint, so each keeps its
 * own refusal; none is answered before the COMMIT. A write that learns its production only as
 * it runs (a first import) commits alone, as do the long writes that are imports.
 */
export async function inWriteTransaction<T>(
  db: Db,
  scope: WriteScope | ((result: T) => WriteScope),
  hooks: WriteHooks<T> | undefined,
  write: (trx: Db, changes: ChangeLog) => Promise<T>,
): Promise<T> {
  if (typeof scope === 'function') return alone(db, scope, hooks, write);
  return committerFor(db, scope.productionId).submit((trx, defer) =>
    runWrite(trx, scope, hooks, write, defer),
  );
}

/** One write's statements, in whatever transaction (or savepoint) it was given. */
async function runWrite<T>(
  trx: Db,
  scope: WriteScope | ((result: T) => WriteScope),
  hooks: WriteHooks<T> | undefined,
  write: (trx: Db, changes: ChangeLog) => Promise<T>,
  defer?: (statement: Deferred) => void,
): Promise<WriteOutcome<T>> {
  await hooks?.begin(trx);
  const changes = new ChangeLog();
  const result = await write(trx, changes);
  await hooks?.end(trx, result, defer);
  // a write that creates its production (a first import) knows the scope only once done
  const resolved = typeof scope === 'function' ? scope(result) : scope;
  // its own rows' stamps are part of the write (rolled back with it); its revision and change
  // rows are recorded with its group's, as the transaction's last statements (recordChanges)
  if (changes.size > 0) await stampUpdatedAt(trx, resolved.productionId, changes, changes.at);
  return { result, scope: resolved, changes };
}

/** A write in a transaction of its own. */
async function alone<T>(
  db: Db,
  scope: (result: T) => WriteScope,
  hooks: WriteHooks<T> | undefined,
  write: (trx: Db, changes: ChangeLog) => Promise<T>,
): Promise<T> {
  const { outcome, revision } = await db.transaction().execute(async (trx) => {
    const outcome = await runWrite(trx, scope, hooks, write);
    const [revision] = await recordChanges(trx, [outcome]);
    return { outcome, revision };
  });
  observersOf(db)?.committed(1);
  // committed: wake the feed's long-polls and the webhook worker
  if (revision !== null && revision !== undefined) announceCommit(db, outcome.scope.productionId, revision);
  return outcome.result;
}
