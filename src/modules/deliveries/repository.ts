import type { Db } from '../../db/index.js';
import { sql } from 'kysely';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';

/**
 * Deliveries in the production's order (pages of position, id). A delivery counts as changed
 * when it or its gating approval did: the row shows that approval's status.
 */
export function listDeliveries(db: Db, productionId: number, window: PageWindow) {
  let q = db
    .selectFrom('deliveries as dl')
    .leftJoin('departments as fd', 'fd.id', 'dl.from_department_id')
    .leftJoin('departments as td', 'td.id', 'dl.to_department_id')
    .leftJoin('approvals as a', 'a.id', 'dl.gating_approval_id')
    .where('dl.production_id', '=', productionId)
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
  q = changedSince(
    q,
    'dl.updated_at',
    'dl.retired_at',
    window.since,
    (since) => sql`a.updated_at > ${since}`,
  );
  q = keysetPage(q, ['dl.position', 'dl.id'], 'asc', window);
  return q.orderBy('dl.position').orderBy('dl.id').execute();
}
