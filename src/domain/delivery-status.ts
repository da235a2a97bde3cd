import type { DeliveryStatus } from './vocabulary.js';

/*
 * Where a delivery may go from each status, in one table: the status route, a review that
 * accepts the delivery, the OpenAPI text and the README all read it.
 *
 * - draft → ready → sent → accepted is the normal path; `sent` stamps `sent_at`.
 * - sent → ready recalls a turnover (the vendor no longer sees its package).
 * - draft, ready and sent may be blocked, and a blocked delivery returns to any of the three.
 * - accepted is final: nothing leaves it.
 *
 * Setting the status a delivery already has is no move: answered unchanged, recorded nowhere.
 */
export const DELIVERY_TRANSITIONS: Readonly<Record<DeliveryStatus, readonly DeliveryStatus[]>> = {
  draft: ['ready', 'blocked'],
  ready: ['sent', 'blocked'],
  sent: ['accepted', 'ready', 'blocked'],
  blocked: ['draft', 'ready', 'sent'],
  accepted: [],
};

export const allowedNextStatuses = (from: DeliveryStatus): readonly DeliveryStatus[] =>
  DELIVERY_TRANSITIONS[from];

export const canMove = (from: DeliveryStatus, to: DeliveryStatus): boolean =>
  DELIVERY_TRANSITIONS[from].includes(to);

/** The refusal's words: what the delivery may become instead (none, once accepted). */
export function transitionProblem(from: DeliveryStatus, to: DeliveryStatus): string {
  const next = DELIVERY_TRANSITIONS[from];
  const allowed = next.length
    ? `from ${from} it may become ${next.join(', ')}`
    : `${from} is final: it may become nothing else`;
  return `a ${from} delivery cannot become ${to}; ${allowed}`;
}

/** The table in words, one line a status, for the OpenAPI description and the CLI. */
export const TRANSITIONS_TEXT = (Object.entries(DELIVERY_TRANSITIONS) as Array<[string, string[]]>)
  .map(
    ([from, to]) => `\`${from}\` → ${to.length ? to.map((s) => `\`${s}\``).join(', ') : 'nothing (final)'}`,
  )
  .join('; ');
