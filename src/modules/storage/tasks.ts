import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction } from '../../db/write-hooks.js';
import { normaliseLibraryPath } from './paths.js';

export class TaskInputError extends Error {}

/** Queues an admin-approved move for the storage agent (the CLI is the admin's door). */
export async function queueMoveTask(
  db: Db,
  input: { productionId: number; from: string; to: string; approvedBy: string },
): Promise<{ id: number }> {
  const from = normaliseLibraryPath(input.from);
  if ('reason' in from) throw new TaskInputError(`--from: ${from.reason}`);
  const to = normaliseLibraryPath(input.to);
  if ('reason' in to) throw new TaskInputError(`--to: ${to.reason}`);
  if (from.path === to.path) throw new TaskInputError('--from and --to name the same path');
  const scope = { productionId: input.productionId, actor: input.approvedBy };
  return inWriteTransaction(db, scope, undefined, async (trx, changes) => {
    const row = await trx
      .insertInto('storage_tasks')
      .values({
        production_id: input.productionId,
        op: 'move',
        from_path: from.path,
        to_path: to.path,
        approved_by: input.approvedBy,
        approved_at: nowIso(),
        status: 'pending',
        note: null,
        settled_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    changes.created('storage_task', row.id);
    return { id: row.id };
  });
}
