import { sql, type Insertable } from 'kysely';
import type { ChangeFacts } from '../../auth/clamp.js';
import type { ChangeKind } from '../../db/change-log.js';
import { dbClock } from '../../db/clock.js';
import type { Backlog } from '../../metrics/plugin.js';
import type { Db } from '../../db/index.js';
import type { Database } from '../../db/schema.js';

const COLUMNS = [
  'w.id',
  'w.production_id',
  'w.url',
  'w.kinds',
  'w.secret',
  'w.active',
  'w.cursor',
  'w.failures',
  'w.next_attempt_at',
  'w.last_error',
  'w.last_delivered_at',
  'w.lease_owner',
  'w.lease_until',
  'w.created_at',
  'w.created_by',
  'w.engagement_id',
  'w.expiries_at',
  'w.expiries_grant_id',
] as const;

export function webhookRows(db: Db, productionId: number, id?: number) {
  let q = db.selectFrom('webhooks as w').where('w.production_id', '=', productionId).select(COLUMNS);
  if (id !== undefined) q = q.where('w.id', '=', id);
  return q.orderBy('w.id').execute();
}
export type WebhookRow = Awaited<ReturnType<typeof webhookRows>>[number];

/** An engagement of the production, archived or not (an engagement webhook names one). */
export function engagementOf(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('engagements')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .select(['id', 'ref', 'retired_at'])
    .executeTakeFirst();
}

/** One subscription with its production's code and the database's clock (`db_now`), for the delivery loop. */
export function webhookForDelivery(db: Db, id: number) {
  return db
    .selectFrom('webhooks as w')
    .innerJoin('productions as p', 'p.id', 'w.production_id')
    .where('w.id', '=', id)
    .select([...COLUMNS, 'p.code as production_code', dbClock(db).as('db_now')])
    .executeTakeFirst();
}

/**
 * Active subscriptions no other process holds (lease free, run out or already ours), in every
 * production. Leases are judged on the database's clock, never this host's.
 */
export function deliverableIds(db: Db, owner: string) {
  return db
    .selectFrom('webhooks')
    .where('active', '=', 1)
    .where((eb) =>
      eb.or([
        eb('lease_owner', 'is', null),
        eb('lease_until', '<', dbClock(db)),
        eb('lease_owner', '=', owner),
      ]),
    )
    .select('id')
    .orderBy('id')
    .execute();
}

/**
 * Takes or extends the subscription's lease for `owner`, for `leaseMs` from now on the
 * database's clock: one conditional update, so of several processes exactly one wins a free or
 * run-out lease, and no host's clock (however skewed) enters the judgement. True when held.
 */
export async function takeLease(db: Db, id: number, owner: string, leaseMs: number): Promise<boolean> {
  const r = await db
    .updateTable('webhooks')
    .set({ lease_owner: owner, lease_until: dbClock(db, leaseMs) })
    .where('id', '=', id)
    .where('active', '=', 1)
    .where((eb) =>
      eb.or([
        eb('lease_owner', 'is', null),
        eb('lease_until', '<', dbClock(db)),
        eb('lease_owner', '=', owner),
      ]),
    )
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * The heartbeat: extends every lease `owner` still holds by `leaseMs` on the database's clock,
 * in one statement, and answers the subscriptions it holds (any other it thought it held was
 * taken over, or removed).
 */
export async function renewLeases(db: Db, owner: string, leaseMs: number): Promise<Set<number>> {
  const rows = await db
    .updateTable('webhooks')
    .set({ lease_until: dbClock(db, leaseMs) })
    .where('lease_owner', '=', owner)
    .where('active', '=', 1)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

export async function releaseLease(db: Db, id: number, owner: string): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

export interface Attempt {
  webhookId: number;
  /** The change delivered; for a grant's expiry, the feed position it was announced at. */
  changeId: number;
  /** The grant whose expiry the attempt announced (null: a change of the log). */
  expiredGrantId: number | null;
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  delivered: boolean;
}

/**
 * Logs attempts and moves the subscription on, in one transaction, only while `owner` still
 * holds the lease (false: it lost it, and must stop). `next.cursor` is the last change
 * delivered (or left out by the kinds filter); after a failure `next.retryInMs` schedules
 * the retry, on the database's clock as the lease. Extends the lease too: a holder that keeps recording keeps the subscription.
 */
export async function recordAttempts(
  db: Db,
  owner: string,
  webhookId: number,
  attempts: readonly Attempt[],
  next: {
    cursor: number;
    /** An engagement webhook's position among its grants' expiries, when it moved. */
    expiries?: ExpiryPosition;
    failures: number;
    /** After a failure: how long until the retry, from now on the database's clock. */
    retryInMs: number | null;
    /** How long the lease runs from now, on the database's clock. */
    leaseMs: number;
  },
): Promise<boolean> {
  const lastDelivered = attempts.findLast((a) => a.delivered);
  const lastFailed = attempts.findLast((a) => !a.delivered);
  return db.transaction().execute(async (trx) => {
    const moved = await trx
      .updateTable('webhooks')
      .set({
        cursor: next.cursor,
        failures: next.failures,
        next_attempt_at: next.retryInMs === null ? null : dbClock(trx, next.retryInMs),
        lease_until: dbClock(trx, next.leaseMs),
        ...(next.expiries ? { expiries_at: next.expiries.at, expiries_grant_id: next.expiries.grantId } : {}),
        ...(lastDelivered ? { last_delivered_at: lastDelivered.at } : {}),
        ...(lastFailed ? { last_error: lastFailed.error } : {}),
      })
      .where('id', '=', webhookId)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) return false;
    if (attempts.length > 0) {
      await trx
        .insertInto('webhook_deliveries')
        .values(
          attempts.map((a) => ({
            webhook_id: a.webhookId,
            change_id: a.changeId,
            attempt: a.attempt,
            at: a.at,
            status_code: a.statusCode,
            error: a.error,
            duration_ms: a.durationMs,
            delivered: a.delivered ? 1 : 0,
            expired_grant_id: a.expiredGrantId,
          })),
        )
        .execute();
    }
    return true;
  });
}

/** Keeps the newest `keep` attempts of a subscription's log. */
export async function pruneDeliveries(db: Db, webhookId: number, keep: number): Promise<void> {
  const edge = await db
    .selectFrom('webhook_deliveries')
    .where('webhook_id', '=', webhookId)
    .select('id')
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(1)
    .executeTakeFirst();
  if (edge)
    await db
      .deleteFrom('webhook_deliveries')
      .where('webhook_id', '=', webhookId)
      .where('id', '<=', edge.id)
      .execute();
}

export function deliveryRows(db: Db, webhookId: number, limit: number) {
  return db
    .selectFrom('webhook_deliveries as d')
    .leftJoin('changes as c', 'c.id', 'd.change_id')
    .where('d.webhook_id', '=', webhookId)
    .select([
      'd.id',
      'd.at',
      'd.change_id',
      'c.kind',
      'c.object_id',
      'c.op',
      'd.attempt',
      'd.delivered',
      'd.status_code',
      'd.error',
      'd.duration_ms',
      'd.expired_grant_id',
    ])
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Each active subscription's backlog (the first `maxSubscriptions` by id), two indexed queries
 * each, every count stopping at `cap`: a scrape's work stays bounded however far a receiver is
 * behind.
 */
export async function deliveryBacklogs(db: Db, cap: number, maxSubscriptions: number): Promise<Backlog[]> {
  const subs = await db
    .selectFrom('webhooks')
    .where('active', '=', 1)
    .select(['id', 'production_id', 'cursor', 'kinds'])
    .orderBy('id')
    .limit(maxSubscriptions)
    .execute();
  const out: Backlog[] = [];
  for (const s of subs) {
    const kinds = s.kinds ? (JSON.parse(s.kinds) as ChangeKind[]) : null;
    // an empty list of kinds matches nothing (null: every kind)
    let after = db
      .selectFrom('changes')
      .where('production_id', '=', s.production_id)
      .where('id', '>', Number(s.cursor));
    if (kinds !== null)
      after = kinds.length ? after.where('kind', 'in', kinds) : after.where(sql<boolean>`false`);
    const [count, oldest] = await Promise.all([
      db
        .selectFrom(after.select('id').orderBy('id').limit(cap).as('pending'))
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
      after.select('at').orderBy('id').limit(1).executeTakeFirst(),
    ]);
    out.push({ webhookId: s.id, pending: Number(count?.n ?? 0), oldestAt: oldest?.at ?? null });
  }
  return out;
}

/** Where an engagement webhook stands among its engagement's grant expiries. */
export interface ExpiryPosition {
  at: string;
  grantId: number;
}

/**
 * The grants of the engagement whose expiry has passed (at `now`) after `from`, not revoked,
 * in the order they lapsed: the expiries an engagement webhook has still to announce.
 */
export function expiriesDue(
  db: Db,
  productionId: number,
  engagementId: number,
  from: ExpiryPosition,
  now: string,
  limit: number,
) {
  return db
    .selectFrom('grants')
    .where('production_id', '=', productionId)
    .where('engagement_id', '=', engagementId)
    .where('revoked_at', 'is', null)
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
    .where(sql<boolean>`(expires_at, id) > (${from.at}, ${from.grantId})`)
    .select(['id', 'expires_at'])
    .orderBy('expires_at')
    .orderBy('id')
    .limit(limit)
    .execute() as Promise<Array<{ id: number; expires_at: string }>>;
}

/** When the engagement's next live grant lapses after `now` (null: none will). */
export async function nextExpiry(
  db: Db,
  productionId: number,
  engagementId: number,
  now: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('grants')
    .where('production_id', '=', productionId)
    .where('engagement_id', '=', engagementId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .select((eb) => eb.fn.min('expires_at').as('at'))
    .executeTakeFirst();
  return row?.at ?? null;
}

/**
 * What an engagement webhook's judgement needs of the objects a batch of changes names: their
 * media, submissions and grants, and the deliveries those and the delivery changes name. At
 * most four queries, whatever the batch.
 */
export async function changeFacts(
  db: Db,
  productionId: number,
  changes: ReadonlyArray<{ kind: string; object_id: number }>,
): Promise<ChangeFacts> {
  const idsOf = (kind: string) => [
    ...new Set(changes.filter((c) => c.kind === kind).map((c) => c.object_id)),
  ];
  const [mediaIds, submissionIds, grantIds] = [idsOf('media'), idsOf('submission'), idsOf('grant')];
  const media = mediaIds.length
    ? await db
        .selectFrom('media')
        .where('production_id', '=', productionId)
        .where('id', 'in', mediaIds)
        .select(['id', 'delivery_id', 'work_item_id', 'uploader_engagement_id', 'removed_at'])
        .execute()
    : [];
  const submissions = submissionIds.length
    ? await db
        .selectFrom('work_items')
        .where('production_id', '=', productionId)
        .where('id', 'in', submissionIds)
        .select(['id', 'delivery_id', 'engagement_id'])
        .execute()
    : [];
  const grants = grantIds.length
    ? await db
        .selectFrom('grants')
        .where('production_id', '=', productionId)
        .where('id', 'in', grantIds)
        .select(['id', 'engagement_id'])
        .execute()
    : [];
  const deliveryIds = [
    ...new Set([
      ...idsOf('delivery'),
      ...media.flatMap((m) => (m.delivery_id === null ? [] : [m.delivery_id])),
    ]),
  ];
  const deliveries = deliveryIds.length
    ? await db
        .selectFrom('deliveries')
        .where('production_id', '=', productionId)
        .where('id', 'in', deliveryIds)
        .select(['id', 'status', 'sent_at'])
        .execute()
    : [];
  return {
    media: new Map(media.map((m) => [m.id, m])),
    submissions: new Map(submissions.map((w) => [w.id, w])),
    grants: new Map(grants.map((g) => [g.id, g])),
    deliveries: new Map(deliveries.map((d) => [d.id, d])),
  };
}

export async function insertWebhook(db: Db, row: Insertable<Database['webhooks']>): Promise<number> {
  const { id } = await db.insertInto('webhooks').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}

/** Resuming starts afresh: the failure count and the back-off are cleared. */
export async function setWebhookActive(db: Db, id: number, active: boolean): Promise<void> {
  await db
    .updateTable('webhooks')
    .set(active ? { active: 1, failures: 0, next_attempt_at: null } : { active: 0 })
    .where('id', '=', id)
    .execute();
}

/** The subscription and its delivery history. */
export async function deleteWebhook(db: Db, id: number): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}
