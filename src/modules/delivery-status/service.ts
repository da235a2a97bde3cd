import { keyActor, writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { ChangeLog } from '../../db/change-log.js';
import type { Db } from '../../db/index.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { canMove, transitionProblem } from '../../domain/delivery-status.js';
import type { DeliveryStatus } from '../../domain/vocabulary.js';
import { errors } from '../../errors.js';
import { appendActivity } from '../../db/activity-log.js';
import { actorOf } from '../../auth/audit-actor.js';
import { recordAudit } from '../../auth/audit-record.js';
import { clip } from '../activity/write-entry.js';
import type { Delivery } from '../deliveries/schemas.js';
import { oneDelivery } from '../deliveries/service.js';
import { liveDelivery, moveDeliveryStatus } from './repository.js';
import type { StatusBody } from './schemas.js';

/** The activity feed's verb for a move, in the words a coordinator uses. */
function verbOf(from: DeliveryStatus, to: DeliveryStatus): string {
  if (to === 'sent') return from === 'blocked' ? 'unblocked and sent' : 'sent';
  if (from === 'sent' && to === 'ready') return 'recalled';
  if (to === 'blocked') return 'blocked';
  if (from === 'blocked') return 'unblocked';
  if (to === 'accepted') return 'accepted';
  return `marked ${to}`;
}

/**
 * Moves a live delivery from its status to `to` as the transition table allows, inside the
 * caller's write: 409 `invalid_transition` naming the allowed next statuses otherwise, 409
 * when another request moved it meanwhile. Answers whether it moved (false: already `to`).
 */
export async function moveDelivery(
  trx: Db,
  principal: Principal,
  changes: ChangeLog,
  delivery: { id: number; title: string; status: DeliveryStatus },
  to: DeliveryStatus,
  note: string | null,
  /** What the refusal's detail starts with: the field that asked for the move. */
  field = 'status: ',
): Promise<boolean> {
  const from = delivery.status;
  if (from === to) return false;
  if (!canMove(from, to)) throw errors.invalidTransition(`${field}${transitionProblem(from, to)}`);
  // the change log's time: the stamp it puts on the row, so the answer shows it already
  const at = changes.at;
  if (!(await moveDeliveryStatus(trx, principal.productionId, delivery.id, from, to, at)))
    throw errors.conflict(
      `${field}the delivery was moved by another request meanwhile; nothing was recorded`,
    );
  changes.updated('delivery', delivery.id);
  await recordAudit(trx, {
    productionId: principal.productionId,
    actor: actorOf(principal),
    action: 'delivery.status',
    object: { type: 'delivery', id: delivery.id },
    summary: `delivery "${delivery.title}": ${from} → ${to}`,
  });
  await appendActivity(trx, {
    productionId: principal.productionId,
    actor: keyActor(principal),
    verb: verbOf(from, to),
    summary: `delivery "${delivery.title}": ${from} → ${to}${note ? ` — ${clip(note)}` : ''}`,
    apiKeyId: principal.keyId,
    personId: principal.personId,
    at,
  });
  return true;
}

/**
 * Sets a delivery's status (admin): 404 for an unknown or retired delivery; a move the table
 * does not allow is 409 `invalid_transition`; setting the status it has answers it unchanged
 * and records nothing. Answers the delivery as GET /deliveries shows it.
 */
export async function setDeliveryStatus(
  ctx: AppContext,
  principal: Principal,
  deliveryId: number,
  input: StatusBody,
  hooks?: WriteHooks<Delivery>,
): Promise<Delivery> {
  const pid = principal.productionId;
  const note = input.note?.trim() || null;
  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    const delivery = await liveDelivery(trx, pid, deliveryId);
    if (!delivery) throw errors.notFound('delivery');
    await moveDelivery(trx, principal, changes, delivery, input.status, note);
    return oneDelivery(trx, pid, deliveryId);
  });
}
