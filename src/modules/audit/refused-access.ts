import { performance } from 'node:perf_hooks';
import type { Principal, RouteAuth } from '../../auth/principal.js';
import { authorize } from '../../auth/route-hook.js';
import type { Db } from '../../db/index.js';
import { isAppError } from '../../errors.js';
import { actorOf } from '../../auth/audit-actor.js';
import { recordAudit } from '../../auth/audit-record.js';

/** A key's refusals on one route are recorded at most once in this long by each server. */
const EVERY_MS = 60_000;
/** Per database handle (a process serves one; tests open several). */
const recordedBy = new WeakMap<Db, Map<string, number>>();

/** Whether this key's refusal on this route is due a row; notes it as recorded. */
function due(db: Db, keyId: number, route: string): boolean {
  let lastRecorded = recordedBy.get(db);
  if (!lastRecorded) recordedBy.set(db, (lastRecorded = new Map<string, number>()));
  const slot = `${keyId} ${route}`;
  const now = performance.now();
  const last = lastRecorded.get(slot);
  if (last !== undefined && now - last < EVERY_MS) return false;
  // bounded: a server that has seen very many keys and routes starts its clocks afresh
  if (lastRecorded.size > 10_000) lastRecorded.clear();
  lastRecorded.set(slot, now);
  return true;
}

/**
 * Records a known key (or session) turned away from a route it does not reach (403: a vendor's
 * key outside the round-trip endpoints, a missing scope, a coordinator at the keys): what a
 * content-security review asks about. Refusals cost the caller nothing in the rate limit, so a
 * key that keeps knocking on one route gets one row a minute per server, not one a request;
 * the row names the route template, never the URL's query. A trail that cannot be written does
 * not turn the refusal into another answer.
 */
export async function recordRefusedAccess(
  db: Db,
  principal: Principal,
  route: string,
  detail: string,
): Promise<void> {
  if (!due(db, principal.keyId, route)) return;
  await recordAudit(db, {
    productionId: principal.productionId,
    actor: actorOf(principal),
    action: 'access.refused',
    object: { type: 'route', id: null },
    summary: `${route}: ${detail}`,
    outcome: 'refused',
  }).catch(() => undefined);
}

/**
 * authorize(), with a known key's or session's refusal (403) recorded in the audit trail under
 * `where` (a route template, or an MCP tool, resource or prompt): REST and MCP refuse alike and
 * are recorded alike.
 */
export async function authorizeOrRecord(
  db: Db,
  principal: Principal,
  auth: RouteAuth,
  where: string,
): Promise<void> {
  try {
    authorize(principal, auth);
  } catch (err) {
    if (isAppError(err) && err.status === 403) await recordRefusedAccess(db, principal, where, err.message);
    throw err;
  }
}
