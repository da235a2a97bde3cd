import type { Db } from '../../db/index.js';
import type { Id } from '../sync/cells.js';
import { fromBool, toBool } from '../../db/values.js';
import { groupBy } from '../../util/group-by.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { type ExportContext, nameOf } from './export-context.js';
import { json, type RowContext } from './row-context.js';

/**
 * Purchase orders, and weekly cost reports with their lines: the rows each document object
 * becomes, and (for an export) the document objects the stored rows become.
 */

type Doc = Required<ProductionDocument>;
export type DocPurchaseOrder = Doc['purchase_orders'][number];
export type DocCostReport = Doc['cost_reports'][number];

export const PURCHASE_ORDER_COLUMNS = {
  vendor_organisation_id: 'integer',
  department_id: 'integer',
  account: 'text',
  description: 'text',
  amount: 'double precision',
  status: 'text',
  date: 'text',
} satisfies ColumnTypes<'purchase_orders'>;

/** An order without a ref is known by its vendor, account, date and description. */
export const purchaseOrderKey = (
  ref: string | null | undefined,
  vendor: string | null,
  o: { account: string; date: string; description: string },
): string => ref ?? `po ${vendor ?? '?'} ${o.account} ${o.date} "${o.description}"`;

export const purchaseOrderRow = <I extends Id>(o: DocPurchaseOrder, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: o.ref ?? null,
  vendor_organisation_id: ctx.need(o.vendor),
  department_id: ctx.id(o.department),
  account: o.account,
  description: o.description ?? '',
  amount: o.amount,
  status: o.status,
  date: o.date,
});

export const COST_REPORT_COLUMNS = { active: 'integer' } satisfies ColumnTypes<'cost_reports'>;

export const costReportKey = (r: { week_of: string }): string => `week of ${r.week_of}`;

export const costReportRow = <I extends Id>(r: DocCostReport, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  week_of: r.week_of,
  active: fromBool(r.active),
});

export interface Line {
  account: string;
  description: string | null;
  budget: number | null;
  actual: number | null;
  committed: number | null;
}

export const linesOf = (r: DocCostReport): Line[] =>
  (r.lines ?? []).map((l) => ({
    account: l.account,
    description: l.description ?? null,
    budget: l.budget ?? null,
    actual: l.actual ?? null,
    committed: l.committed ?? null,
  }));

export const lineKey = (l: Line): string => json([l.account, l.description, l.budget, l.actual, l.committed]);

/** Every purchase order, cost report and line, in the document's order. */
export async function readMoney(db: Db, pid: number) {
  const [orders, reports, lines] = await Promise.all([
    db.selectFrom('purchase_orders').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    db.selectFrom('cost_reports').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    db
      .selectFrom('cost_report_lines')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
  ]);
  return { orders, reports, lines };
}
export type StoredMoney = Awaited<ReturnType<typeof readMoney>>;

export const moneyRefs = (m: StoredMoney): Array<string | null> => m.orders.map((o) => o.ref);

const amount = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function moneyDoc(m: StoredMoney, ex: ExportContext) {
  const linesOfReport = groupBy(m.lines, (l) => l.cost_report_id);
  return {
    // an order without a vendor (the document's always have one) is not the document's to carry
    purchase_orders: m.orders.flatMap((o): DocPurchaseOrder[] =>
      o.vendor_organisation_id === null
        ? []
        : [
            {
              ref: ex.refFor(o, 'po'),
              vendor: nameOf(ex.organisation, o.vendor_organisation_id),
              department: ex.departmentOf(o.department_id),
              account: o.account,
              description: o.description,
              amount: Number(o.amount),
              status: o.status,
              date: o.date,
            },
          ],
    ),
    cost_reports: m.reports.map((r): DocCostReport => ({
      week_of: r.week_of,
      active: toBool(r.active),
      lines: (linesOfReport.get(r.id) ?? []).map((l) => ({
        account: l.account,
        description: l.description,
        budget: amount(l.budget),
        actual: amount(l.actual),
        committed: amount(l.committed),
      })),
    })),
  };
}
