import type { Db } from '../../db/index.js';
import { nowIso, parseJson } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { ENGAGEMENT_EVENT_KINDS } from '../../auth/clamp.js';
import { errors } from '../../errors.js';
import { appendActivity } from '../../db/activity-log.js';
import { auditAdmin, type AdminActor } from '../admin/service.js';
import type { AuditAction } from '../../auth/audit-actions.js';
import { decodeCursor, encodeCursor } from '../changes/cursor.js';
import { headChangeId } from '../changes/repository.js';
import { neverReached } from './egress.js';
import * as repo from './repository.js';
import type { CreatedWebhook, Delivery, NewWebhook, Webhook } from './schemas.js';
import { newSecret } from './signature.js';

/*
 * Webhook subscriptions for the admin API and the CLI: one set of rules for both. Adding and
 * removing one is recorded in the activity feed (by the URL's origin: a URL may carry a token).
 */

const toWebhook = (w: repo.WebhookRow): Webhook => ({
  id: w.id,
  url: w.url,
  kinds: parseJson<Webhook['kinds']>(w.kinds, null),
  active: w.active === 1,
  cursor: encodeCursor(Number(w.cursor)),
  failures: w.failures,
  next_attempt_at: w.next_attempt_at,
  last_error: w.last_error,
  last_delivered_at: w.last_delivered_at,
  created_at: w.created_at,
  created_by: w.created_by,
  engagement_id: w.engagement_id,
});

/**
 * An absolute http(s) URL without credentials (they would be logged and shown back), not at an
 * address webhooks never reach (which addresses a delivery reaches is judged again, after DNS,
 * each time one is made).
 */
export function checkUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw errors.invalid('url', 'is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw errors.invalid('url', 'must be http:// or https://');
  if (url.username !== '' || url.password !== '')
    throw errors.invalid('url', 'must not carry a user or password');
  if (neverReached(url))
    throw errors.invalid('url', 'is a link-local, metadata or reserved address, which webhooks never reach');
  return url.toString();
}

async function oneRow(db: Db, productionId: number, id: number): Promise<repo.WebhookRow> {
  const [w] = await repo.webhookRows(db, productionId, id);
  if (!w) throw errors.notFound('webhook');
  return w;
}

/**
 * The activity entry and the audit row of a change to a subscription. Both name the receiver by
 * its origin only: a URL's path or query may carry a receiver's own secret.
 */
async function record(
  db: Db,
  productionId: number,
  actor: AdminActor,
  verb: string,
  hook: { id: number; url: string; engagement: string | null; engagementId: number | null },
  at: string,
) {
  const forWhom = hook.engagement === null ? '' : ` for engagement ${hook.engagement}`;
  const summary = `webhook to ${new URL(hook.url).origin}${forWhom}`;
  await appendActivity(db, {
    productionId,
    actor: actor.name,
    verb,
    summary,
    apiKeyId: actor.apiKeyId,
    personId: actor.personId,
    at,
  });
  const action: AuditAction = `webhook.${verb === 'added' ? 'create' : verb === 'removed' ? 'remove' : verb === 'paused' ? 'pause' : 'resume'}`;
  await auditAdmin(
    db,
    productionId,
    actor,
    action,
    { type: 'webhook', id: hook.id, engagementId: hook.engagementId },
    summary,
  );
}

export async function listWebhooks(db: Db, productionId: number): Promise<Webhook[]> {
  return (await repo.webhookRows(db, productionId)).map(toWebhook);
}

/**
 * The engagement an engagement webhook is for: live in this production (an unknown or archived
 * one is 422), and the kinds asked for among those an engagement is ever told of.
 */
async function webhookEngagement(
  db: Db,
  productionId: number,
  input: NewWebhook,
): Promise<{ id: number; name: string } | null> {
  const id = input.engagement_id ?? null;
  if (id === null) return null;
  const e = await repo.engagementOf(db, productionId, id);
  if (!e) throw errors.invalid('engagement_id', `no engagement ${id} in this production`);
  if (e.retired_at !== null)
    throw errors.invalid('engagement_id', `engagement "${e.ref ?? e.id}" is archived`);
  const beyond = (input.kinds ?? []).filter(
    (k) => !(ENGAGEMENT_EVENT_KINDS as readonly string[]).includes(k),
  );
  if (beyond.length > 0)
    throw errors.invalid(
      'kinds',
      `an engagement webhook is told only of ${ENGAGEMENT_EVENT_KINDS.join(', ')}: not ${beyond.join(', ')}`,
    );
  return { id: e.id, name: String(e.id) };
}

const engagementNameOf = (w: repo.WebhookRow): string | null =>
  w.engagement_id === null ? null : String(w.engagement_id);

export async function addWebhook(
  db: Db,
  productionId: number,
  actor: AdminActor,
  input: NewWebhook,
  hooks?: WriteHooks<CreatedWebhook>,
): Promise<CreatedWebhook> {
  const url = checkUrl(input.url);
  const after =
    input.after === undefined || input.after === 'now' ? null : decodeCursor(input.after, 'after');
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx) => {
    const engagement = await webhookEngagement(trx, productionId, input);
    const at = nowIso();
    const secret = newSecret();
    const id = await repo.insertWebhook(trx, {
      production_id: productionId,
      url,
      kinds: input.kinds ? JSON.stringify(input.kinds) : null,
      secret,
      cursor: after ?? (await headChangeId(trx, productionId)),
      created_at: at,
      created_by: actor.name,
      engagement_id: engagement?.id ?? null,
    });
    await record(
      trx,
      productionId,
      actor,
      'added',
      { id, url, engagement: engagement?.name ?? null, engagementId: engagement?.id ?? null },
      at,
    );
    return { ...toWebhook(await oneRow(trx, productionId, id)), secret };
  });
}

/**
 * Pauses or resumes a subscription. Resuming retries at once: the backoff of a receiver that
 * was down starts over. Changes committed while paused are delivered on resume.
 */
export async function setWebhookActive(
  db: Db,
  productionId: number,
  actor: AdminActor,
  id: number,
  active: boolean,
  hooks?: WriteHooks<Webhook>,
): Promise<Webhook> {
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx) => {
    const before = await oneRow(trx, productionId, id);
    if ((before.active === 1) !== active) {
      await repo.setWebhookActive(trx, id, active);
      const hook = {
        id,
        url: before.url,
        engagement: engagementNameOf(before),
        engagementId: before.engagement_id,
      };
      await record(trx, productionId, actor, active ? 'resumed' : 'paused', hook, nowIso());
    }
    return toWebhook(await oneRow(trx, productionId, id));
  });
}

/** Removes a subscription and its delivery log; deliveries stop before the next change. */
export async function removeWebhook(
  db: Db,
  productionId: number,
  actor: AdminActor,
  id: number,
  hooks?: WriteHooks<Webhook>,
): Promise<Webhook> {
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx) => {
    const row = await oneRow(trx, productionId, id);
    const gone = toWebhook(row);
    await repo.deleteWebhook(trx, id);
    await record(
      trx,
      productionId,
      actor,
      'removed',
      { id, url: row.url, engagement: engagementNameOf(row), engagementId: row.engagement_id },
      nowIso(),
    );
    return { ...gone, active: false };
  });
}

export async function listDeliveries(
  db: Db,
  productionId: number,
  id: number,
  limit = 50,
): Promise<Delivery[]> {
  await oneRow(db, productionId, id);
  const rows = await repo.deliveryRows(db, id, Math.min(limit, 200));
  return rows.map((d) => ({
    id: d.id,
    at: d.at,
    // an engagement webhook's announcement of a lapsed grant is no change of the log
    change:
      d.expired_grant_id !== null
        ? { cursor: encodeCursor(Number(d.change_id)), kind: 'grant', id: d.expired_grant_id, op: 'expired' }
        : {
            cursor: encodeCursor(Number(d.change_id)),
            kind: d.kind ?? null,
            id: d.object_id ?? null,
            op: d.op ?? null,
          },
    attempt: d.attempt,
    delivered: d.delivered === 1,
    status_code: d.status_code,
    error: d.error,
    duration_ms: d.duration_ms,
  }));
}
