import type { Db } from './index.js';

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

/** One write, one transaction, with the caller's hooks around it. */
export function inWriteTransaction<T>(
  db: Db,
  hooks: WriteHooks<T> | undefined,
  write: (trx: Db) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await hooks?.begin(trx);
    const result = await write(trx);
    await hooks?.end(trx, result);
    return result;
  });
}
