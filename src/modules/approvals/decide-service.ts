import { writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { errors } from '../../errors.js';
import { appendActivity } from '../activity/repository.js';
import { clip, entryFor } from '../activity/write-entry.js';
import * as repo from './decide-repository.js';
import type { DecideBody, Decision } from './decide-schemas.js';
import type { ApprovalChain } from './schemas.js';
import { approvalChains } from './service.js';

/** `decided_by` names the step's person by name (any case) or by id. */
function isStepPerson(step: repo.StepRow, decidedBy: string): boolean {
  if (step.person_id !== null && /^\d+$/.test(decidedBy) && Number(decidedBy) === step.person_id) return true;
  return step.person !== null && step.person.trim().toLowerCase() === decidedBy.toLowerCase();
}

/**
 * Decides the current step of an approval (decisions.md, "Domain rules"): `approved` on the
 * last step approves it (and releases a version subject), on an earlier step hands over to
 * the next one; `changes` sends it back. Refusals record nothing.
 */
export async function decideApproval(
  ctx: AppContext,
  principal: Principal,
  approvalId: number,
  input: DecideBody,
  hooks?: WriteHooks<ApprovalChain>,
): Promise<ApprovalChain> {
  const pid = principal.productionId;
  const decision: Decision = input.decision;
  const named = input.decided_by?.trim() || null;
  const note = input.note?.trim() || null;

  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    const approval = await repo.findApproval(trx, pid, approvalId);
    if (!approval) throw errors.notFound('approval');
    if (approval.status !== 'pending') {
      throw errors.conflict(`approval is already ${approval.status}; nothing was recorded`);
    }
    const steps = await repo.stepsOf(trx, approvalId);
    const at = nowIso();
    const position = approval.current_step;
    const step = steps.find((s) => s.position === position);
    if (!step) throw errors.conflict('approval has no step left to decide; nothing was recorded');
    if (input.step !== undefined && input.step !== position) {
      throw errors.conflict(
        `step ${input.step} is no longer the current step (step ${position} is); nothing was recorded`,
      );
    }
    let decidedBy: string;
    if (named === null) {
      if (approval.mode === 'decision') {
        throw errors.invalid(
          'decided_by',
          'is required on a decision-mode approval (no anonymous decisions)',
        );
      }
      decidedBy = principal.label;
    } else {
      if (!isStepPerson(step, named)) {
        const owner = step.person ? ` (it is ${step.person}'s)` : '';
        throw errors.forbidden(
          `decided_by "${named}" is not the person whose step it is${owner}; nothing was recorded`,
        );
      }
      decidedBy = step.person ?? named;
    }

    const last = steps[steps.length - 1]!.position;
    const next = steps.find((s) => s.position > position);
    const status = decision === 'changes' ? 'changes_requested' : position >= last ? 'approved' : 'pending';
    const nextStep = decision === 'approved' && next ? next.position : position;
    const moved = await repo.moveApproval(
      trx,
      pid,
      approvalId,
      { step: position },
      { status, step: nextStep, at },
    );
    if (!moved)
      throw errors.conflict('approval was decided by another request meanwhile; nothing was recorded');
    await repo.recordStep(trx, approvalId, position, { decision, decidedBy, note, at });
    changes.updated('approval', approvalId);

    let released: { node_id: number; version: number } | undefined;
    if (status === 'approved' && approval.subject_version_id !== null) {
      released = await repo.releaseVersion(trx, pid, approval.subject_version_id);
      if (released) changes.updated('version', approval.subject_version_id);
    }
    const nodeId = approval.subject_node_id ?? released?.node_id ?? null;
    if (nodeId !== null) {
      const node = await repo.touchNode(trx, pid, nodeId, at);
      if (node) changes.updated(node.kind === 'scene' ? 'scene' : 'asset', nodeId);
    }

    const outcome =
      status === 'approved'
        ? `approved${released ? `, v${released.version} released` : ''}`
        : status === 'changes_requested'
          ? 'changes requested'
          : `step ${nextStep + 1} of ${steps.length} is next`;
    const summary =
      `"${approval.title}" step ${position + 1} of ${steps.length} ${decision === 'changes' ? 'sent back' : 'approved'} ` +
      `by ${decidedBy}: ${outcome}${note ? ` — ${clip(note)}` : ''}`;
    await appendActivity(
      trx,
      entryFor(principal, decision === 'changes' ? 'requested changes' : 'approved', summary, nodeId, at),
    );

    // the answer is the chain exactly as GET /approvals shows it, read back inside the write
    const [chain] = await approvalChains(trx, pid, { ids: [approvalId] });
    return chain!;
  });
}
