import type { Db } from '../../db/index.js';

export function listDeliveries(db: Db, productionId: number) {
  return db
    .selectFrom('deliveries as dl')
    .leftJoin('departments as fd', 'fd.id', 'dl.from_department_id')
    .leftJoin('departments as td', 'td.id', 'dl.to_department_id')
    .leftJoin('approvals as a', 'a.id', 'dl.gating_approval_id')
    .where('dl.production_id', '=', productionId)
    .where('dl.retired_at', 'is', null)
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
    ])
    .orderBy('dl.position')
    .orderBy('dl.id')
    .execute();
}
