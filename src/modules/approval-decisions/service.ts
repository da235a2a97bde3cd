import { writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { errors } from '../../errors.js';
import { appendActivity } from '../../db/activity-log.js';
import { clip, entryFor } from '../activity/write-entry.js';
import * as repo from './repository.js';
import type { DecideBody, Decision } from './schemas.js';
import type { ApprovalChain } from '../approvals/schemas.js';
import { approvalChains } from '../approvals/service.js';

/** `name` names the person by name (any case) or by id. */
function names(name: string, person: { id: number | null; name: string | null }): boolean {
  if (person.id !== null && /^\d+$/.test(name) && Number(name) === person.id) return true;
  return person.name !== null && person.name.trim().toLowerCase() === name.toLowerCase();
}

const stepPerson = (step: repo.StepRow) => ({ id: step.person_id, name: step.person });

/** Whether a key bound to a person holds this step: the step names that person (by id, or by name when it names no id). */
const holdsStep = (step: repo.StepRow, principal: Principal): boolean =>
  step.person_id !== null
    ? step.person_id === principal.personId
    : principal.personName !== null && names(principal.personName, stepPerson(step));

const notTheirStep = (named: string, step: repo.StepRow) => {
  const owner = step.person ? ` (it is ${step.person}'s)` : '';
  return errors.forbidden(
    `decided_by "${named}" is not the person whose step it is${owner}; nothing was recorded`,
  );
};

/**
 * Who a decision is recorded under, or the refusal. A key bound to a person decides as that
 * person only: naming anyone else is refused (403) even when the name is the step's person,
 * and naming no one means its person. A key bound to no one (an integration) names the step's
 * person, or on a chain may name no one and is recorded under its label; a decision-mode
 * approval refuses an anonymous decision (422). Either way the activity entry and the change
 * feed record the key the decision came through.
 */
function decider(principal: Principal, step: repo.StepRow, mode: string, named: string | null): string {
  if (principal.personId !== null) {
    const self = { id: principal.personId, name: principal.personName };
    if (named !== null && !names(named, self)) {
      throw errors.forbidden(
        `this key decides as ${principal.personName ?? 'its own person'} only; decided_by "${named}" names someone else; nothing was recorded`,
      );
    }
    if (!holdsStep(step, principal)) throw notTheirStep(named ?? principal.personName ?? '', step);
    return step.person ?? principal.personName ?? principal.label;
  }
  if (named === null) {
    if (mode === 'decision') {
      throw errors.invalid('decided_by', 'is required on a decision-mode approval (no anonymous decisions)');
    }
    return principal.label;
  }
  if (!names(named, stepPerson(step))) throw notTheirStep(named, step);
  return step.person ?? named;
}

/**
 * Decides the current step of an approval: `approved` on the
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
    const decidedBy = decider(principal, step, approval.mode, named);

    const last = steps.at(-1)?.position ?? position;
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
    if (!chain) throw new Error(`internal: approval ${approvalId} was not read back inside its own write`);
    return chain;
  });
}
