import { keyActor, writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { errors } from '../../errors.js';
import { appendActivity } from '../../db/activity-log.js';
import { actorOf } from '../../auth/audit-actor.js';
import { recordAudit } from '../../auth/audit-record.js';
import { clip } from '../activity/write-entry.js';
import { moveDelivery } from '../delivery-status/service.js';
import * as repo from './repository.js';
import type { ReviewBody } from './schemas.js';
import { submittedFiles } from '../turnovers/repository.js';
import type { SubmissionRow } from '../turnovers/schemas.js';
import { toSubmissionRow } from '../turnovers/submission-list.js';

interface Reviewer {
  name: string;
  personId: number | null;
}

/** `named` names this person: by id (digits) or by name, any case. */
const namesPerson = (named: string, person: { id: number | null; name: string | null }): boolean =>
  (person.id !== null && /^\d+$/.test(named) && Number(named) === person.id) ||
  (person.name !== null && person.name.trim().toLowerCase() === named.toLowerCase());

/**
 * Who a review is recorded under, as a decision is (decideApproval): a key bound to a person
 * reviews as that person only (naming anyone else is 403); a key bound to no one names a person
 * of the production, or no one and is recorded under its label.
 */
async function reviewerOf(db: Db, principal: Principal, named: string | null): Promise<Reviewer> {
  if (principal.personId !== null) {
    const self = { id: principal.personId, name: principal.personName };
    if (named !== null && !namesPerson(named, self))
      throw errors.forbidden(
        `this key reviews as ${principal.personName ?? 'its own person'} only; reviewed_by "${named}" names someone else; nothing was recorded`,
      );
    return { name: principal.personName ?? principal.label, personId: principal.personId };
  }
  if (named === null) return { name: principal.label, personId: null };
  const found = (await repo.peopleNamed(db, principal.productionId, named)).filter((p) =>
    namesPerson(named, p),
  );
  const exact = found.find((p) => String(p.id) === named);
  if (exact) return { name: exact.name, personId: exact.id };
  if (found.length === 0) throw errors.invalid('reviewed_by', `no person "${named}" in this production`);
  if (found.length > 1)
    throw errors.invalid('reviewed_by', `"${named}" names ${found.length} people; name one by person id`);
  return { name: found[0]!.name, personId: found[0]!.id };
}

function checkInput(input: ReviewBody): string {
  const note = input.note.trim();
  if (input.decision === 'changes_requested' && note === '')
    throw errors.invalid('note', 'must say what to change when asking for changes');
  if (input.accept_delivery && input.decision !== 'accepted')
    throw errors.invalid('accept_delivery', 'only an accepting review can accept the delivery');
  return note;
}

/**
 * Reviews a submission: its status becomes the decision and it carries the review (note, who,
 * when); a later review replaces it (the activity feed keeps each). With `accept_delivery` an
 * accepting review also moves its delivery from `sent` to `accepted` in the same write.
 * Refusals record nothing: 404 unknown submission (or on a retired delivery), 422 a bad field,
 * 403 a person-bound key naming someone else, 409 `invalid_transition` for the delivery.
 * Answers the submission as GET /submissions lists it.
 */
export async function reviewSubmission(
  ctx: AppContext,
  principal: Principal,
  submissionId: number,
  input: ReviewBody,
  hooks?: WriteHooks<SubmissionRow>,
): Promise<SubmissionRow> {
  const pid = principal.productionId;
  const note = checkInput(input);
  const named = input.reviewed_by?.trim() || null;
  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    const item = await repo.submissionToReview(trx, pid, submissionId);
    if (!item) throw errors.notFound('submission');
    const reviewer = await reviewerOf(trx, principal, named);
    const at = changes.at;
    await repo.recordReview(trx, pid, submissionId, {
      decision: input.decision,
      note,
      reviewedBy: reviewer.name,
      reviewerPersonId: reviewer.personId,
      at,
    });
    changes.updated('submission', submissionId);
    const by = item.organisation_name ?? item.engagement_ref ?? 'a vendor';
    await recordAudit(trx, {
      productionId: pid,
      actor: actorOf(principal),
      action: 'submission.review',
      object: { type: 'submission', id: submissionId },
      engagementId: item.engagement_id,
      summary: `${input.decision}: "${item.title}" from ${by} on turnover "${item.delivery_title}", reviewed by ${reviewer.name}`,
    });
    await appendActivity(trx, {
      productionId: pid,
      actor: keyActor(principal),
      verb: input.decision === 'accepted' ? 'accepted' : 'requested changes',
      summary: `"${item.title}" from ${by} on turnover "${item.delivery_title}", reviewed by ${reviewer.name}${note ? ` — ${clip(note)}` : ''}`,
      apiKeyId: principal.keyId,
      personId: principal.personId,
      at,
    });
    if (input.accept_delivery) {
      const delivery = { id: item.delivery_id, title: item.delivery_title, status: item.delivery_status };
      await moveDelivery(trx, principal, changes, delivery, 'accepted', note || null, 'accept_delivery: ');
    }
    const row = await repo.submissionRow(trx, pid, submissionId);
    if (!row) throw new Error(`internal: submission ${submissionId} was not read back inside its own write`);
    return toSubmissionRow(row, await submittedFiles(trx, pid, [submissionId]));
  });
}
