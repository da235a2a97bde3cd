import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';

const TASK_COLUMNS = [
  'id',
  'op',
  'from_path',
  'to_path',
  'approved_by',
  'approved_at',
  'status',
  'note',
  'settled_at',
] as const;

export function pendingTasks(db: Db, productionId: number) {
  return db
    .selectFrom('storage_tasks')
    .where('production_id', '=', productionId)
    .where('status', '=', 'pending')
    .orderBy('approved_at')
    .orderBy('id')
    .select(TASK_COLUMNS)
    .execute();
}

export function findTask(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('storage_tasks')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .select(TASK_COLUMNS)
    .executeTakeFirst();
}

export type TaskRow = NonNullable<Awaited<ReturnType<typeof findTask>>>;

/** Settles a pending task; answers nothing when it was settled already (the first ack wins). */
export function settleTask(
  db: Db,
  productionId: number,
  id: number,
  settlement: { status: 'done' | 'failed'; note: string | null; at: string },
) {
  return db
    .updateTable('storage_tasks')
    .set({ status: settlement.status, note: settlement.note, settled_at: settlement.at })
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning(TASK_COLUMNS)
    .executeTakeFirst();
}

/** A pending move, approved now by `approvedBy`. */
export async function insertMoveTask(
  db: Db,
  task: { productionId: number; from: string; to: string; approvedBy: string },
): Promise<number> {
  const { id } = await db
    .insertInto('storage_tasks')
    .values({
      production_id: task.productionId,
      op: 'move',
      from_path: task.from,
      to_path: task.to,
      approved_by: task.approvedBy,
      approved_at: nowIso(),
      status: 'pending',
      note: null,
      settled_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}
