import type { ApprovalStepsTable } from '../../db/schema.js';
import { stepPerson, type DocApproval, type ProductionDocument } from '../schema.js';
import type { Id } from '../sync/cells.js';
import type { ColumnTypes } from '../sync/write.js';
import { iso, type RowContext } from './row-context.js';

/** Approvals with their chain of steps, and department notes. */

export type DocDepartmentNote = Required<ProductionDocument>['department_notes'][number];

export const APPROVAL_COLUMNS = {
  title: 'text',
  mode: 'text',
  status: 'text',
  due: 'text',
  department_id: 'integer',
  subject_node_id: 'integer',
  subject_version_id: 'integer',
  current_step: 'integer',
} satisfies ColumnTypes<'approvals'>;

/** An approval without a ref is known by its title. */
export const approvalKey = (a: { ref?: string | null; title: string }): string =>
  a.ref ?? `approval "${a.title}"`;

export function approvalRow<I extends Id>(a: DocApproval, ctx: RowContext<I>) {
  const created = iso(a.created_at) ?? ctx.now;
  return {
    production_id: ctx.productionId,
    ref: a.ref ?? null,
    title: a.title,
    mode: a.mode,
    status: a.status ?? 'pending',
    due: a.due ?? null,
    department_id: ctx.id(a.department),
    subject_node_id: ctx.id(a.subject?.node),
    subject_version_id: ctx.id(a.subject?.version),
    current_step: a.current_step ?? 0,
    created_at: created,
    updated_at: iso(a.updated_at) ?? created,
  };
}

export interface Step {
  person_id: Id;
  decision: ApprovalStepsTable['decision'];
  decided_by: string | null;
  note: string | null;
  decided_at: string | null;
}

/**
 * The chain as rows. A step written as a person's ref alone counts as decided (approved, in the
 * app, before the document was written) when it comes before the current step, or is the
 * current step of an approved approval.
 */
export function stepsOf(
  a: DocApproval,
  personName: (ref: string) => string | undefined,
  ctx: RowContext,
): Step[] {
  const current = a.current_step ?? 0;
  return a.steps.map((step, j) => {
    const person = stepPerson(step);
    if (typeof step !== 'string' && (step.decision || step.decided_at)) {
      return {
        person_id: ctx.need(person),
        decision: step.decision ?? null,
        decided_by: step.decided_by ?? personName(person) ?? null,
        note: step.note ?? null,
        decided_at: iso(step.decided_at),
      };
    }
    const decided = j < current || (a.status === 'approved' && j <= current);
    return {
      person_id: ctx.need(person),
      decision: decided ? 'approved' : null,
      decided_by: decided ? personName(person)! : null,
      note: null,
      decided_at: null,
    };
  });
}

export const DEPARTMENT_NOTE_COLUMNS = {
  department_id: 'integer',
  node_id: 'integer',
  summary: 'text',
  created_at: 'text',
} satisfies ColumnTypes<'department_notes'>;

/** A note without a ref is known by its summary. */
export const departmentNoteKey = (n: { ref?: string | null; summary: string }): string =>
  n.ref ?? `note "${n.summary}"`;

export const departmentNoteRow = <I extends Id>(n: DocDepartmentNote, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: n.ref ?? null,
  department_id: ctx.id(n.department),
  node_id: ctx.id(n.node),
  summary: n.summary,
  created_at: iso(n.created_at),
});
