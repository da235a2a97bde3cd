import type { Db } from '../../db/index.js';

const NONE = [-1];

export function vendorPurchaseOrders(db: Db, productionId: number, organisationId: number) {
  return db
    .selectFrom('purchase_orders as po')
    .innerJoin('organisations as o', 'o.id', 'po.vendor_organisation_id')
    .where('po.production_id', '=', productionId)
    .where('po.vendor_organisation_id', '=', organisationId)
    .where('po.department_id', 'is not', null)
    .select([
      'po.id',
      'po.department_id',
      'po.account',
      'o.name as vendor',
      'po.description',
      'po.amount',
      'po.status',
      'po.date',
      'po.updated_at',
    ])
    .orderBy('po.date')
    .orderBy('po.id')
    .execute();
}

export function activeCostReport(db: Db, productionId: number) {
  return db
    .selectFrom('cost_reports')
    .where('production_id', '=', productionId)
    .where('active', '=', 1)
    .select(['id', 'week_of'])
    .orderBy('week_of', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Lines whose account belongs to one of the departments (via department_accounts). */
export function linesForDepartments(
  db: Db,
  productionId: number,
  reportId: number,
  departmentIds: readonly number[],
) {
  return db
    .selectFrom('cost_report_lines as l')
    .where('l.production_id', '=', productionId)
    .where('l.cost_report_id', '=', reportId)
    .where('l.account', 'in', (eb) =>
      eb
        .selectFrom('department_accounts as a')
        .where('a.production_id', '=', productionId)
        .where('a.department_id', 'in', departmentIds.length ? [...departmentIds] : NONE)
        .select('a.account'),
    )
    .select(['l.account', 'l.description', 'l.budget', 'l.actual', 'l.committed'])
    .orderBy('l.position')
    .orderBy('l.id')
    .execute();
}
