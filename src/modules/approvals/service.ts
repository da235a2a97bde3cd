import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { MAX_PAGE, openPage, type Page, type PagedList, type PageQuery } from '../../domain/page.js';
import { groupBy } from '../../util/group-by.js';
import * as repo from './repository.js';
import type { ApprovalChain } from './schemas.js';

/**
 * Approval chains with their steps, in two queries whatever their number. Reusable by the
 * write side (pass a transaction as db to read back what it just decided).
 */
export async function approvalChains(
  db: Db,
  productionId: number,
  filter: repo.ApprovalFilter = {},
): Promise<ApprovalChain[]> {
  const [approvals, steps] = await Promise.all([
    repo.listApprovals(db, productionId, filter),
    repo.listSteps(db, productionId, filter),
  ]);
  return approvals.map(chainOf(steps));
}

type ApprovalRow = Awaited<ReturnType<typeof repo.listApprovals>>[number];
type StepRow = Awaited<ReturnType<typeof repo.listSteps>>[number];

function chainOf(steps: StepRow[]): (a: ApprovalRow) => ApprovalChain {
  const stepsOf = groupBy(steps, (s) => s.approval_id);
  return (a) => {
    const pending = a.status === 'pending';
    const current = pending ? a.current_step : null;
    return {
      id: a.id,
      title: a.title,
      mode: a.mode,
      status: a.status,
      due: a.due,
      department: a.department ?? null,
      subject:
        a.subject_node_id === null || a.subject_live_id === null
          ? null
          : {
              node_id: a.subject_node_id,
              label: a.subject_label ?? '',
              kind: a.subject_kind ?? '',
              version_id: a.subject_version_id,
              version: a.subject_version ?? null,
            },
      current_step: current,
      steps: (stepsOf.get(a.id) ?? []).map((s) => ({
        position: s.position,
        person_id: s.person_id,
        person_name: s.person_name ?? null,
        role: s.person_role ?? null,
        current: current !== null && s.position === current,
        decision: s.decision,
        decided_by: s.decided_by,
        note: s.note,
        decided_at: s.decided_at,
      })),
      created_at: a.created_at,
      updated_at: a.updated_at,
    };
  };
}

/** Oldest first: pages of id. */
const APPROVALS: PagedList = { name: 'approvals', key: ['int'], maxLimit: MAX_PAGE };

export interface ApprovalListQuery extends PageQuery {
  status?: ApprovalChain['status'];
}

/** One page of chains in two queries: the page's approvals, then the steps of exactly those. */
export async function listApprovals(
  ctx: AppContext,
  principal: Principal,
  query: ApprovalListQuery = {},
): Promise<Page<ApprovalChain>> {
  const pid = principal.productionId;
  const { window, close } = openPage(APPROVALS, pid, { ...query });
  const approvals = await repo.listApprovals(ctx.db, pid, { status: query.status }, window);
  // a page names its approvals (at most MAX_PAGE ids); an unbounded list filters the steps as it did the approvals
  const steps = await repo.listSteps(
    ctx.db,
    pid,
    window.limit === undefined
      ? { status: query.status, since: window.since, afterId: window.after?.[0] as number | undefined }
      : { ids: approvals.slice(0, window.limit).map((a) => a.id) },
  );
  return close(approvals, (a) => [a.id], chainOf(steps));
}

/** Every chain, unpaged: for callers that need the whole list (MCP resources and prompts). */
export const allApprovals = async (
  ctx: AppContext,
  principal: Principal,
  status?: ApprovalChain['status'],
): Promise<ApprovalChain[]> => approvalChains(ctx.db, principal.productionId, { status });
