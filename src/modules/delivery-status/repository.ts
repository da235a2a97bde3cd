import type { Db } from '../../db/index.js';
import type { DeliveryStatus } from '../../domain/vocabulary.js';

/** A live (not retired) delivery of the production, as a write needs it. */
export function liveDelivery(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('deliveries')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('retired_at', 'is', null)
    .select(['id', 'title', 'kind', 'status'])
    .executeTakeFirst();
}

/**
 * Moves the delivery's status only if it is still `from` (of two concurrent moves exactly one
 * matches); a move to `sent` stamps `sent_at`. `updated_at` is the write's own stamp (set here
 * so the write's answer shows it). Answers whether it moved.
 */
export async function moveDeliveryStatus(
  db: Db,
  productionId: number,
  id: number,
  from: DeliveryStatus,
  to: DeliveryStatus,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set({ status: to, updated_at: at, ...(to === 'sent' ? { sent_at: at } : {}) })
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
