import { actorName, writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { errors, UserError } from '../../errors.js';
import { appendActivity } from '../../db/activity-log.js';
import { lockLibrary } from '../storage-library/repository.js';
import { applyToLibrary } from '../storage-library/service.js';
import { normaliseLibraryPath } from '../storage-library/paths.js';
import type { StorageTask, TaskAckBody, TaskAckResult } from './schemas.js';
import { findTask, insertMoveTask, pendingTasks, settleTask, type TaskRow } from './repository.js';

const toTask = (row: TaskRow): StorageTask => ({
  id: row.id,
  op: row.op,
  from_path: row.from_path,
  to_path: row.to_path,
  approved_by: row.approved_by,
  approved_at: row.approved_at,
  status: row.status,
  note: row.note,
  settled_at: row.settled_at,
});

/** The agent's work list: approved moves not yet acknowledged, oldest first. */
export async function listPendingTasks(ctx: AppContext, principal: Principal): Promise<StorageTask[]> {
  return (await pendingTasks(ctx.db, principal.productionId)).map(toTask);
}

/**
 * Settles a task as the agent reports it. A done move renames the library row in the same
 * transaction. Acknowledging a settled task again answers ok and changes nothing, so an agent
 * that lost the first answer can simply retry.
 */
export async function acknowledgeTask(
  ctx: AppContext,
  principal: Principal,
  ack: TaskAckBody,
  hooks?: WriteHooks<TaskAckResult>,
): Promise<TaskAckResult> {
  const pid = principal.productionId;
  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    await lockLibrary(trx, ctx.dialect, pid);
    const task = await findTask(trx, pid, ack.task_id);
    if (!task) throw errors.notFound('storage task');
    const at = nowIso();
    const settled =
      task.status === 'pending'
        ? await settleTask(trx, pid, task.id, {
            status: ack.ok ? 'done' : 'failed',
            note: ack.note ?? null,
            at,
          })
        : undefined;
    if (!settled) return { ok: true, already_settled: true, task: toTask(task) };
    changes.updated('storage_task', task.id);

    if (ack.ok) {
      await applyToLibrary(trx, pid, [
        { eventType: 'move', path: task.from_path, toPath: task.to_path, at, size: null },
      ]);
    }
    await appendActivity(trx, {
      productionId: pid,
      actor: actorName(principal),
      verb: ack.ok ? 'moved' : 'move_failed',
      summary: ack.ok
        ? `Moved ${task.from_path} to ${task.to_path} (approved by ${task.approved_by})`
        : `Could not move ${task.from_path} to ${task.to_path}${ack.note ? `: ${ack.note}` : ''}`,
      apiKeyId: principal.keyId,
      personId: principal.personId,
      at,
    });
    return { ok: true, already_settled: false, task: toTask(settled) };
  });
}

/** Queues an admin-approved move for the storage agent (the CLI is the admin's door). */
export async function queueMoveTask(
  db: Db,
  input: { productionId: number; from: string; to: string; approvedBy: string },
): Promise<{ id: number }> {
  const from = normaliseLibraryPath(input.from);
  if ('reason' in from) throw new UserError(`--from: ${from.reason}`);
  const to = normaliseLibraryPath(input.to);
  if ('reason' in to) throw new UserError(`--to: ${to.reason}`);
  if (from.path === to.path) throw new UserError('--from and --to name the same path');
  const scope = { productionId: input.productionId, actor: input.approvedBy };
  return inWriteTransaction(db, scope, undefined, async (trx, changes) => {
    const id = await insertMoveTask(trx, {
      productionId: input.productionId,
      from: from.path,
      to: to.path,
      approvedBy: input.approvedBy,
    });
    changes.created('storage_task', id);
    return { id };
  });
}
