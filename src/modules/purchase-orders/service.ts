import { Clamp } from '../../auth/clamp.js';
import { EPOCH, stampOf } from '../../db/updated-at.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import * as repo from './repository.js';
import type { PurchaseOrders } from './schemas.js';

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

/**
 * The money door alone: whether this key holds a live own_po grant now (no query for a
 * production-wide key, which never does; one for an engagement).
 */
export async function holdsOwnPo(ctx: AppContext, principal: Principal): Promise<boolean> {
  if (principal.engagementId === null) return false;
  return (await Clamp.load(ctx.db, principal, { kinds: ['own_po'], departments: false })).holdsOwnPo();
}

/**
 * Rule 7: a vendor's own money. A production-wide key, or an engagement without a live
 * own_po grant, gets the empty answer (never an error); otherwise only the rows whose vendor
 * is the engagement's organisation, and only cost-report lines of its departments' accounts.
 */
export async function purchaseOrders(ctx: AppContext, principal: Principal): Promise<PurchaseOrders> {
  const clamp = await Clamp.load(ctx.db, principal, { kinds: ['own_po'] });
  const organisationId = clamp.organisationId;
  if (!clamp.holdsOwnPo() || organisationId === null) {
    return { purchase_orders: [], line: [], week_of: null };
  }
  const pid = principal.productionId;
  const [orders, report] = await Promise.all([
    repo.vendorPurchaseOrders(ctx.db, pid, organisationId),
    repo.activeCostReport(ctx.db, pid),
  ]);
  const lines = report
    ? await repo.linesForDepartments(ctx.db, pid, report.id, [...clamp.departmentIds])
    : [];
  return {
    purchase_orders: orders.map((o) => ({
      id: o.id,
      department_id: o.department_id,
      account: o.account,
      vendor: o.vendor,
      description: o.description,
      amount: Number(o.amount),
      status: o.status,
      date: o.date,
      updated_at: stampOf(o.updated_at, EPOCH),
    })),
    line: lines.map((l) => ({
      account: l.account,
      description: l.description,
      budget: num(l.budget),
      actual: num(l.actual),
      committed: num(l.committed),
    })),
    week_of: report?.week_of ?? null,
  };
}
