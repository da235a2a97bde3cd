import { idOf, type Id } from '../sync/cells.js';
import { occurrenceKeys, withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { zip } from '../../util/zip.js';
import { diffKeyed, madeUpKeys, type KeyedDiff } from '../sync/keyed.js';
import { insertRows } from '../sync/write.js';
import {
  COST_REPORT_COLUMNS,
  costReportKey,
  costReportRow,
  lineKey,
  linesOf,
  PURCHASE_ORDER_COLUMNS,
  purchaseOrderKey,
  purchaseOrderRow,
  type Line,
} from '../tables/money.js';
import { json } from '../tables/row-context.js';

/*
 * Purchase orders (by ref, or by vendor, account, date and description when they have none)
 * and weekly cost reports (by week) with their lines. The API never writes money: what left
 * the document is deleted.
 */

export class MoneySection {
  orders!: KeyedDiff<'purchase_orders'>;
  reports!: KeyedDiff<'cost_reports'>;
  private readonly linesWanted = new Map<string, Line[]>();

  async diff(ctx: SyncContext): Promise<void> {
    await this.diffOrders(ctx);
    await this.diffReports(ctx);
  }

  private async diffOrders(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const orders =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('purchase_orders as po')
            .leftJoin('organisations as o', 'o.id', 'po.vendor_organisation_id')
            .where('po.production_id', '=', pid)
            .select([
              'po.id',
              'po.ref',
              'po.vendor_organisation_id',
              'po.department_id',
              'po.account',
              'po.description',
              'po.amount',
              'po.status',
              'po.date',
              'o.ref as vendor_ref',
            ])
            .orderBy('po.id')
            .execute();
    const storedOrders = withOccurrenceKeys(orders, (o) => purchaseOrderKey(o.ref, o.vendor_ref, o)).map(
      ([o, key]) => ({ id: o.id, key, values: o }),
    );
    const doc = ctx.doc.purchase_orders ?? [];
    const wantedKeys = madeUpKeys(
      'po',
      storedOrders,
      doc.map((o) => o.ref),
      occurrenceKeys(doc, (o) =>
        purchaseOrderKey(o.ref, o.vendor, { ...o, description: o.description ?? '' }),
      ),
    );
    this.orders = diffKeyed(ctx, {
      kind: 'purchase_orders',
      table: 'purchase_orders',
      columns: PURCHASE_ORDER_COLUMNS,
      stored: storedOrders,
      wanted: zip(doc, wantedKeys).map(([o, key]) => ({
        key,
        ref: o.ref ?? null,
        row: purchaseOrderRow(o, ctx),
      })),
    });
  }

  /** Each stored report's lines, as keys in order. */
  private async readLines(ctx: SyncContext, pid: number | null): Promise<Map<number, string[]>> {
    const lines = new Map<number, string[]>();
    if (pid === null) return lines;
    for (const l of await ctx.db
      .selectFrom('cost_report_lines')
      .where('production_id', '=', pid)
      .select(['cost_report_id', 'account', 'description', 'budget', 'actual', 'committed'])
      .orderBy('cost_report_id')
      .orderBy('position')
      .orderBy('id')
      .execute()) {
      const list = lines.get(l.cost_report_id);
      if (list) list.push(lineKey(l));
      else lines.set(l.cost_report_id, [lineKey(l)]);
    }
    return lines;
  }

  private async diffReports(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const reports =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('cost_reports')
            .where('production_id', '=', pid)
            .select(['id', 'week_of', 'active'])
            .orderBy('id')
            .execute();
    const lines = await this.readLines(ctx, pid);
    const docReports = ctx.doc.cost_reports ?? [];
    const wantedReports = withOccurrenceKeys(docReports, costReportKey);
    for (const [r, key] of wantedReports) this.linesWanted.set(key, linesOf(r));
    this.reports = diffKeyed(ctx, {
      kind: 'cost_reports',
      table: 'cost_reports',
      columns: COST_REPORT_COLUMNS,
      stored: withOccurrenceKeys(reports, costReportKey).map(([r, key]) => ({ id: r.id, key, values: r })),
      wanted: wantedReports.map(([r, key]) => ({
        key,
        ref: null,
        row: costReportRow(r, ctx),
      })),
      children: (s, w) =>
        json(lines.get(s.id) ?? []) === json((this.linesWanted.get(w.key) ?? []).map(lineKey))
          ? []
          : ['lines'],
    });
  }

  settle(ctx: SyncContext): void {
    for (const r of this.orders.removed) {
      this.orders.deletes.push(r.id);
      ctx.record('purchase_orders', 'deleted', r.key, r.id);
    }
    for (const r of this.reports.removed) {
      this.reports.deletes.push(r.id);
      ctx.record('cost_reports', 'deleted', r.key, r.id);
    }
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.orders.deleteRemoved(ctx);
    await this.reports.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.orders.write(ctx);
    await this.reports.write(ctx);
    const rewrite = this.reports.updates.filter((u) => u.children.length).map((u) => u.id);
    if (rewrite.length)
      await ctx.db.deleteFrom('cost_report_lines').where('cost_report_id', 'in', rewrite).execute();
    const pid = idOf(ctx.productionId);
    const reports: Array<{ id: Id; key: string }> = [
      ...this.reports.creates.map((c) => ({ id: c.pending, key: c.key })),
      ...this.reports.updates.filter((u) => u.children.length).map((u) => ({ id: u.id, key: u.key })),
    ];
    await insertRows(
      ctx.db,
      'cost_report_lines',
      reports.flatMap(({ id, key }) =>
        (this.linesWanted.get(key) ?? []).map((l, position) => ({
          production_id: pid,
          cost_report_id: idOf(id),
          ...l,
          position,
        })),
      ),
    );
  }
}
