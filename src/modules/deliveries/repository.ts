import type { Db } from '../../db/index.js';
import { sql } from 'kysely';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';
import { SUBMISSION_COLUMNS } from '../turnovers/repository.js';

const NONE = [-1];

function deliveryQuery(db: Db, productionId: number) {
  return db
    .selectFrom('deliveries as dl')
    .leftJoin('departments as fd', 'fd.id', 'dl.from_department_id')
    .leftJoin('departments as td', 'td.id', 'dl.to_department_id')
    .leftJoin('approvals as a', 'a.id', 'dl.gating_approval_id')
    .where('dl.production_id', '=', productionId)
    .select((eb) => [
      // a review or a new submission changes the row, which shows the newest submissions
      eb
        .selectFrom('work_items as w')
        .whereRef('w.delivery_id', '=', 'dl.id')
        .select((w) => w.fn.max('w.updated_at').as('u'))
        .as('submissions_updated_at'),
    ])
    .select([
      'dl.id',
      'dl.title',
      'dl.kind',
      'dl.status',
      'dl.due',
      'fd.slug as from_department',
      'td.slug as to_department',
      'dl.external_to',
      'dl.spec',
      'dl.sent_at',
      'a.id as approval_id',
      'a.title as approval_title',
      'a.status as approval_status',
      'a.updated_at as approval_updated_at',
      'dl.position',
      'dl.updated_at',
      'dl.retired_at',
    ]);
}

/**
 * Deliveries in the production's order (pages of position, id). A delivery counts as changed
 * when it, its gating approval or one of its submissions did: the row shows them.
 */
export function listDeliveries(db: Db, productionId: number, window: PageWindow) {
  let q = deliveryQuery(db, productionId);
  q = changedSince(
    q,
    'dl.updated_at',
    'dl.retired_at',
    window.since,
    (since) =>
      sql`(a.updated_at > ${since} or exists (select 1 from work_items w where w.delivery_id = dl.id and w.updated_at > ${since}))`,
  );
  q = keysetPage(q, ['dl.position', 'dl.id'], 'asc', window);
  return q.orderBy('dl.position').orderBy('dl.id').execute();
}

/** One delivery of the production, retired or not, as the list shows it. */
export function deliveryById(db: Db, productionId: number, id: number) {
  return deliveryQuery(db, productionId).where('dl.id', '=', id).executeTakeFirst();
}

export type DeliveryRow = Awaited<ReturnType<typeof listDeliveries>>[number];

/**
 * The newest `perDelivery` submissions of each of these deliveries, with how many each has in
 * all (one query, whatever their number), oldest first.
 */
export function latestSubmissions(
  db: Db,
  productionId: number,
  deliveryIds: readonly number[],
  perDelivery: number,
) {
  const ranked = db
    .selectFrom('work_items as w')
    .where('w.production_id', '=', productionId)
    .where('w.delivery_id', 'in', deliveryIds.length ? [...deliveryIds] : NONE)
    .select((eb) => [
      ...SUBMISSION_COLUMNS,
      eb.fn
        .agg<number>('row_number')
        .over((o) => o.partitionBy('w.delivery_id').orderBy('w.id', 'desc'))
        .as('rank'),
      eb.fn
        .countAll<number | string>()
        .over((o) => o.partitionBy('w.delivery_id'))
        .as('total'),
    ]);
  return db
    .selectFrom(ranked.as('s'))
    .where('s.rank', '<=', perDelivery)
    .selectAll()
    .orderBy('s.id')
    .execute();
}
