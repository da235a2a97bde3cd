import { ChangeLog, commitChanges, type WriteScope } from './change-log.js';
import { announceCommit } from './change-signal.js';
import type { Db } from './index.js';
import { observersOf } from './observe.js';

export type { WriteScope } from './change-log.js';

/**
 * Lets a caller take part in a write's transaction without the service knowing why: the
 * HTTP layer uses it for Idempotency-Key bookkeeping, so the record of a write and the
 * write itself commit (or roll back) together.
 */
export interface WriteHooks<T> {
  /** Runs first inside the transaction; throwing aborts the write before anything is written. */
  begin(trx: Db): Promise<void>;
  /** Runs last inside the transaction, with the write's result. */
  end(trx: Db, result: T): Promise<void>;
}

/**
 * The one write path: one transaction, the caller's hooks around the write, and the write's
 * change log committed last (bumping the production's revision). Every service that changes a
 * production goes through here.
 */
export async function inWriteTransaction<T>(
  db: Db,
  scope: WriteScope | ((result: T) => WriteScope),
  hooks: WriteHooks<T> | undefined,
  write: (trx: Db, changes: ChangeLog) => Promise<T>,
): Promise<T> {
  let revision: number | null = null;
  let productionId = 0;
  const result = await db.transaction().execute(async (trx) => {
    await hooks?.begin(trx);
    const changes = new ChangeLog();
    const result = await write(trx, changes);
    await hooks?.end(trx, result);
    // a write that creates its production (a first import) knows the scope only once done
    const resolved = typeof scope === 'function' ? scope(result) : scope;
    productionId = resolved.productionId;
    revision = await commitChanges(trx, resolved, changes);
    return result;
  });
  observersOf(db)?.committed(1);
  // committed: wake the feed's long-polls and the webhook worker
  if (revision !== null) announceCommit(productionId);
  return result;
}
