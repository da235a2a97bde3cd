import { PACKAGE_SHOWN } from '../../auth/clamp.js';
import type { Db } from '../../db/index.js';
import { sql } from 'kysely';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';
import type { WorkItemsTable } from '../../db/schema.js';

/** A submission's columns as every list of submissions reads them, from `work_items as w`. */
export const SUBMISSION_COLUMNS = [
  'w.id',
  'w.delivery_id',
  'w.engagement_id',
  'w.status',
  'w.title',
  'w.note',
  'w.created_at',
  'w.review_note',
  'w.reviewed_by',
  'w.reviewed_at',
] as const;

const NONE = [-1];

/**
 * The granted deliveries in the production's order (pages of position, id), each with when its
 * package and `engagementId`'s own submissions on it last changed. With `since`: those changed
 * after it, or whose grant did (`regranted`), or whose shown package (a file added or taken out
 * while it is sent or accepted) or this engagement's own submissions (a new one, a review) did,
 * retired ones included.
 */
export function deliveriesByIds(
  db: Db,
  productionId: number,
  ids: readonly number[],
  window: PageWindow,
  regranted: readonly number[],
  engagementId: number,
) {
  let q = db
    .selectFrom('deliveries')
    .where('production_id', '=', productionId)
    .where('id', 'in', ids.length ? [...ids] : NONE)
    .select([
      'id',
      'title',
      'status',
      'due',
      'external_to',
      'spec',
      'sent_at',
      'position',
      'updated_at',
      'retired_at',
    ])
    .select((eb) => [
      eb
        .selectFrom('media as m')
        .whereRef('m.delivery_id', '=', 'deliveries.id')
        .where('m.work_item_id', 'is', null)
        .select((s) => s.fn.max('m.updated_at').as('at'))
        .as('package_changed_at'),
      eb
        .selectFrom('work_items as w')
        .whereRef('w.delivery_id', '=', 'deliveries.id')
        .where('w.engagement_id', '=', engagementId)
        .select((s) => s.fn.max('w.updated_at').as('at'))
        .as('work_changed_at'),
    ]);
  q = changedSince(
    q,
    'updated_at',
    'retired_at',
    window.since,
    (since) => sql`(
      id in (${sql.join(regranted.length ? regranted : NONE)})
      or (status in (${sql.join(PACKAGE_SHOWN)}) and exists (
        select 1 from media m
        where m.delivery_id = deliveries.id and m.work_item_id is null and m.updated_at > ${since}))
      or exists (
        select 1 from work_items w
        where w.delivery_id = deliveries.id and w.engagement_id = ${engagementId} and w.updated_at > ${since})
    )`,
  );
  q = keysetPage(q, ['position', 'id'], 'asc', window);
  return q.orderBy('position').orderBy('id').execute();
}

/** One engagement's own submissions on these deliveries, oldest first (one query). */
export function ownSubmissionsOn(
  db: Db,
  productionId: number,
  engagementId: number,
  deliveryIds: readonly number[],
) {
  return db
    .selectFrom('work_items')
    .where('production_id', '=', productionId)
    .where('engagement_id', '=', engagementId)
    .where('delivery_id', 'in', deliveryIds.length ? [...deliveryIds] : NONE)
    .select([
      'id',
      'delivery_id',
      'status',
      'title',
      'created_at',
      'review_note',
      'reviewed_by',
      'reviewed_at',
    ])
    .orderBy('id')
    .execute();
}

export function findDelivery(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('deliveries')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('retired_at', 'is', null)
    .select(['id', 'title'])
    .executeTakeFirst();
}

export interface NewWorkItem {
  production_id: number;
  delivery_id: number;
  engagement_id: number;
  title: string;
  note: string;
  status: WorkItemsTable['status'];
  created_by: string;
  created_at: string;
}

export async function insertWorkItem(db: Db, row: NewWorkItem): Promise<number> {
  const out = await db.insertInto('work_items').values(row).returning('id').executeTakeFirstOrThrow();
  return out.id;
}

/** Which submissions a list may answer: the clamp's reach, already judged for this request. */
export interface SubmissionReach {
  /** Only these deliveries (null: any delivery of the production). */
  deliveryIds: readonly number[] | null;
  /** Only this engagement's work (null: every engagement's). */
  engagementId: number | null;
  /** Deliveries whose grant changed after the window's instant: their work counts as changed. */
  regranted: readonly number[];
}

/**
 * One page of submissions in the order they arrived (id), with their delivery's retirement.
 * Without `since` only those on live deliveries; with it those submitted after it, those on a
 * delivery retired or regranted after it (retired ones carry the delivery's `retired_at`).
 */
export function submissionsIn(
  db: Db,
  productionId: number,
  reach: SubmissionReach,
  deliveryId: number | undefined,
  window: PageWindow,
) {
  let q = db
    .selectFrom('work_items as w')
    .innerJoin('deliveries as d', 'd.id', 'w.delivery_id')
    .where('w.production_id', '=', productionId)
    .select([...SUBMISSION_COLUMNS, 'd.retired_at']);
  if (reach.deliveryIds !== null)
    q = q.where('w.delivery_id', 'in', reach.deliveryIds.length ? [...reach.deliveryIds] : NONE);
  if (reach.engagementId !== null) q = q.where('w.engagement_id', '=', reach.engagementId);
  if (deliveryId !== undefined) q = q.where('w.delivery_id', '=', deliveryId);
  const since = window.since;
  if (since === undefined) q = q.where('d.retired_at', 'is', null);
  else {
    const regranted = reach.regranted.length ? [...reach.regranted] : NONE;
    q = q.where((eb) =>
      eb.or([
        eb('w.created_at', '>', since),
        eb('d.retired_at', '>', since),
        eb('w.delivery_id', 'in', regranted),
      ]),
    );
  }
  return keysetPage(q, ['w.id'], 'asc', window).orderBy('w.id').execute();
}

/**
 * The files of these submissions (the production's own, found by production-scoped queries), in
 * upload order (one query). The production is checked on the rows, not in the statement: there
 * it would offer the planner `media_production`, a walk of every media object of the production,
 * which SQLite picks without statistics over `media_work_item`.
 */
export async function submittedFiles(db: Db, productionId: number, workItemIds: readonly number[]) {
  const rows = await db
    .selectFrom('media')
    .where('work_item_id', 'in', workItemIds.length ? [...workItemIds] : NONE)
    .select([
      'id',
      'production_id',
      'work_item_id',
      'uploader_engagement_id',
      'label',
      'kind',
      'content_type',
      'size',
      'sha256',
    ])
    .orderBy('id')
    .execute();
  return rows.filter((m) => m.production_id === productionId);
}

/**
 * The current package of these deliveries (the production's own, found by production-scoped
 * queries): their own files (no work item), not taken out, in upload order (one query, on
 * `media_delivery`; the production is checked on the rows, as in submittedFiles).
 */
export async function packageFiles(db: Db, productionId: number, deliveryIds: readonly number[]) {
  const rows = await db
    .selectFrom('media')
    .where('delivery_id', 'in', deliveryIds.length ? [...deliveryIds] : NONE)
    .where('work_item_id', 'is', null)
    .where('removed_at', 'is', null)
    .select(['id', 'production_id', 'delivery_id', 'label', 'kind', 'content_type', 'size', 'sha256'])
    .orderBy('id')
    .execute();
  return rows.filter((m) => m.production_id === productionId);
}
