import type { Db } from '../../db/index.js';
import type { ApprovalStepsTable, ApprovalsTable } from '../../db/schema.js';

export function findApproval(db: Db, productionId: number, approvalId: number) {
  return db
    .selectFrom('approvals as a')
    .leftJoin('departments as d', 'd.id', 'a.department_id')
    .where('a.id', '=', approvalId)
    .where('a.production_id', '=', productionId)
    .select([
      'a.id',
      'a.title',
      'a.mode',
      'a.status',
      'a.due',
      'a.subject_node_id',
      'a.subject_version_id',
      'a.current_step',
      'd.slug as department',
    ])
    .executeTakeFirst();
}

export function stepsOf(db: Db, approvalId: number) {
  return db
    .selectFrom('approval_steps as s')
    .leftJoin('people as p', 'p.id', 's.person_id')
    .where('s.approval_id', '=', approvalId)
    .select([
      's.position',
      's.person_id',
      'p.name as person',
      's.decision',
      's.decided_by',
      's.note',
      's.decided_at',
    ])
    .orderBy('s.position')
    .execute();
}

export type StepRow = Awaited<ReturnType<typeof stepsOf>>[number];

/**
 * Moves the approval on only if it is still where the caller saw it: of two concurrent
 * decisions on one step exactly one matches (on PostgreSQL the second waits for the first's
 * row lock, then re-reads the row and no longer matches). Returns whether it moved.
 */
export async function moveApproval(
  db: Db,
  productionId: number,
  approvalId: number,
  from: { step: number },
  to: { status: ApprovalsTable['status']; step: number; at: string },
): Promise<boolean> {
  const result = await db
    .updateTable('approvals')
    .set({ status: to.status, current_step: to.step, updated_at: to.at })
    .where('id', '=', approvalId)
    .where('production_id', '=', productionId)
    .where('status', '=', 'pending')
    .where('current_step', '=', from.step)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function recordStep(
  db: Db,
  approvalId: number,
  position: number,
  step: {
    decision: NonNullable<ApprovalStepsTable['decision']>;
    decidedBy: string;
    note: string | null;
    at: string;
  },
) {
  return db
    .updateTable('approval_steps')
    .set({ decision: step.decision, decided_by: step.decidedBy, note: step.note, decided_at: step.at })
    .where('approval_id', '=', approvalId)
    .where('position', '=', position)
    .execute();
}

/** A version approved by its approval is released: it now carries media and shows in bundles. */
export function releaseVersion(db: Db, productionId: number, versionId: number) {
  return db
    .updateTable('versions')
    .set({ status: 'approved', released: 1 })
    .where('id', '=', versionId)
    .where('production_id', '=', productionId)
    .returning(['node_id', 'version'])
    .executeTakeFirst();
}

export function touchNode(db: Db, productionId: number, nodeId: number, at: string) {
  return db
    .updateTable('nodes')
    .set({ updated_at: at })
    .where('id', '=', nodeId)
    .where('production_id', '=', productionId)
    .returning(['label', 'kind'])
    .executeTakeFirst();
}
