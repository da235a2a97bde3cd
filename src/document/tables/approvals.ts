import type { Db } from '../../db/index.js';
import type { ApprovalStepsTable } from '../../db/schema.js';
import { groupBy } from '../../util/group-by.js';
import { stepPerson, type DocApproval, type DocStep, type ProductionDocument } from '../schema.js';
import type { Id } from '../sync/cells.js';
import type { ColumnTypes } from '../sync/write.js';
import { opt, type ExportContext } from './export-context.js';
import { iso, type RowContext } from './row-context.js';

/**
 * Approvals with their chain of steps, and department notes: the rows each document object
 * becomes, and (for an export) the document objects the stored rows become.
 */

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
      decided_by: decided ? (personName(person) ?? null) : null,
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

/** Every approval, step and department note, in the document's order. */
export async function readApprovals(db: Db, pid: number) {
  const [approvals, steps, notes] = await Promise.all([
    db.selectFrom('approvals').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    db
      .selectFrom('approval_steps')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .execute(),
    db.selectFrom('department_notes').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
  ]);
  return { approvals, steps, notes };
}
export type StoredApprovals = Awaited<ReturnType<typeof readApprovals>>;
type StoredApproval = StoredApprovals['approvals'][number];
type StoredStep = StoredApprovals['steps'][number];

export const approvalRefs = (a: StoredApprovals): Array<string | null> =>
  [...a.approvals, ...a.notes].map((r) => r.ref);

/** The versions approvals are on (each gets a ref, so the approval can name it). */
export const subjectVersions = (a: StoredApprovals): Set<number> =>
  new Set(a.approvals.flatMap((x) => (x.subject_version_id === null ? [] : [x.subject_version_id])));

/** Approvals get a ref when they have one, and when a delivery waits on them (`gating`). */
export function nameApprovals(a: StoredApprovals, gating: ReadonlySet<number>, ex: ExportContext): void {
  ex.name(
    a.approvals.filter((x) => x.ref || gating.has(x.id)),
    ex.approval,
    () => 'approval',
  );
}

/** A step as the document writes it: the person's ref alone while undecided. */
function stepDoc(s: StoredStep, person: string): DocStep {
  if (s.decision === null && s.decided_at === null) return person;
  return {
    person,
    decision: opt(s.decision),
    decided_by: opt(s.decided_by),
    note: opt(s.note),
    decided_at: opt(s.decided_at),
  };
}

/** An approval whose chain names nobody the document has is left out (null). */
function approvalDoc(a: StoredApproval, chain: readonly StoredStep[], ex: ExportContext): DocApproval | null {
  const steps = chain.flatMap((s) => {
    const person = s.person_id === null ? undefined : ex.person.get(s.person_id);
    return person === undefined ? [] : [stepDoc(s, person)];
  });
  if (steps.length === 0) return null;
  const node = ex.nodeOf(a.subject_node_id);
  const version = a.subject_version_id === null ? undefined : ex.version.get(a.subject_version_id);
  return {
    ...(ex.approval.has(a.id) ? { ref: ex.approval.get(a.id) } : {}),
    title: a.title,
    mode: a.mode,
    status: a.status,
    due: a.due,
    department: ex.departmentOf(a.department_id),
    ...(node !== null ? { subject: { node, ...(version !== undefined ? { version } : {}) } } : {}),
    steps,
    current_step: a.current_step,
    created_at: a.created_at,
    updated_at: a.updated_at,
  };
}

export function approvalsDoc(a: StoredApprovals, ex: ExportContext) {
  const chainOf = groupBy(a.steps, (s) => s.approval_id);
  return {
    approvals: a.approvals.flatMap((x) => approvalDoc(x, chainOf.get(x.id) ?? [], ex) ?? []),
    department_notes: a.notes.map((n): DocDepartmentNote => ({
      ref: ex.refFor(n, 'note'),
      department: ex.departmentOf(n.department_id),
      node: ex.nodeOf(n.node_id),
      summary: n.summary,
      created_at: n.created_at,
    })),
  };
}
