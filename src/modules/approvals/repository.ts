import type { Db } from '../../db/index.js';
import type { ApprovalsTable } from '../../db/schema.js';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';

export interface ApprovalFilter {
  status?: ApprovalsTable['status'];
  ids?: readonly number[];
  /** Steps only: of approvals changed after this instant / after this id. */
  since?: string;
  afterId?: number;
}

const WHOLE: PageWindow = { limit: undefined, after: undefined, since: undefined };

/** Approvals oldest first (pages of id); approvals are deleted, never retired, so none come back retired. */
export function listApprovals(db: Db, productionId: number, filter: ApprovalFilter = {}, window = WHOLE) {
  let q = db
    .selectFrom('approvals as a')
    .leftJoin('departments as d', 'd.id', 'a.department_id')
    // a retired subject is shown as no subject, exactly as if it had never existed
    .leftJoin('nodes as n', (j) => j.onRef('n.id', '=', 'a.subject_node_id').on('n.retired_at', 'is', null))
    .leftJoin('versions as v', 'v.id', 'a.subject_version_id')
    .where('a.production_id', '=', productionId)
    .select([
      'a.id',
      'a.title',
      'a.mode',
      'a.status',
      'a.due',
      'd.slug as department',
      'a.subject_node_id',
      'n.id as subject_live_id',
      'n.label as subject_label',
      'n.kind as subject_kind',
      'a.subject_version_id',
      'v.version as subject_version',
      'a.current_step',
      'a.created_at',
      'a.updated_at',
    ]);
  if (filter.status !== undefined) q = q.where('a.status', '=', filter.status);
  if (filter.ids !== undefined) q = q.where('a.id', 'in', filter.ids.length ? [...filter.ids] : [-1]);
  q = changedSince(q, 'a.updated_at', null, window.since);
  q = keysetPage(q, ['a.id'], 'asc', window);
  return q.orderBy('a.id').execute();
}

/** Steps of every approval of the production (or of some), in one query. */
export function listSteps(db: Db, productionId: number, filter: ApprovalFilter = {}) {
  let q = db
    .selectFrom('approval_steps as s')
    .innerJoin('approvals as a', 'a.id', 's.approval_id')
    .leftJoin('people as p', 'p.id', 's.person_id')
    .where('s.production_id', '=', productionId)
    .select([
      's.approval_id',
      's.position',
      's.person_id',
      'p.name as person_name',
      'p.role as person_role',
      's.decision',
      's.decided_by',
      's.note',
      's.decided_at',
    ]);
  if (filter.status !== undefined) q = q.where('a.status', '=', filter.status);
  if (filter.ids !== undefined) q = q.where('a.id', 'in', filter.ids.length ? [...filter.ids] : [-1]);
  if (filter.since !== undefined) q = q.where('a.updated_at', '>', filter.since);
  if (filter.afterId !== undefined) q = q.where('a.id', '>', filter.afterId);
  return q.orderBy('s.approval_id').orderBy('s.position').execute();
}
