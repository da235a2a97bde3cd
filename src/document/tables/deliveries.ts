import type { Db } from '../../db/index.js';
import { parseJson } from '../../db/values.js';
import type { Id } from '../sync/cells.js';
import type { DocTurnoverFile, ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { nameOf, type ExportContext } from './export-context.js';
import { iso, json, type RowContext } from './row-context.js';

/**
 * Deliveries: the rows each document object becomes, and (for an export) the document
 * objects the live rows become.
 */

export type DocDelivery = Required<ProductionDocument>['deliveries'][number];

export const DELIVERY_COLUMNS = {
  title: 'text',
  kind: 'text',
  status: 'text',
  due: 'text',
  from_department_id: 'integer',
  to_department_id: 'integer',
  external_to: 'text',
  spec: 'text',
  sent_at: 'text',
  gating_approval_id: 'integer',
  position: 'integer',
  retired_at: 'text',
} satisfies ColumnTypes<'deliveries'>;

export const deliveryRow = <I extends Id>(d: DocDelivery, position: number, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: d.ref,
  title: d.title,
  kind: d.kind,
  status: d.status ?? 'draft',
  due: d.due ?? null,
  from_department_id: ctx.id(d.from_department),
  to_department_id: ctx.id(d.to_department),
  external_to: d.external_to ?? null,
  spec: json(d.spec ?? []),
  sent_at: iso(d.sent_at),
  gating_approval_id: ctx.id(d.gating_approval),
  position,
  retired_at: null,
});

/** The live deliveries, in the document's order. */
export const readDeliveries = (db: Db, pid: number) =>
  db
    .selectFrom('deliveries')
    .where('production_id', '=', pid)
    .where('retired_at', 'is', null)
    .selectAll()
    .orderBy('position')
    .orderBy('id')
    .execute();
export type StoredDelivery = Awaited<ReturnType<typeof readDeliveries>>[number];

/** The approvals deliveries wait on (each gets a ref, so the delivery can name it). */
export const gatingApprovals = (deliveries: readonly StoredDelivery[]): Set<number> =>
  new Set(deliveries.flatMap((d) => (d.gating_approval_id === null ? [] : [d.gating_approval_id])));

/** `packageOf`: the files of a delivery's package (a delivery without any lists none). */
export const deliveriesDoc = (
  deliveries: readonly StoredDelivery[],
  packageOf: (deliveryId: number) => DocTurnoverFile[],
  ex: ExportContext,
) => ({
  deliveries: deliveries.map((d): DocDelivery => ({
    ref: nameOf(ex.delivery, d.id),
    title: d.title,
    kind: d.kind,
    status: d.status,
    due: d.due,
    from_department: ex.departmentOf(d.from_department_id),
    to_department: ex.departmentOf(d.to_department_id),
    external_to: d.external_to,
    spec: parseJson<Array<Record<string, unknown>>>(d.spec, []),
    sent_at: d.sent_at,
    gating_approval: d.gating_approval_id === null ? null : (ex.approval.get(d.gating_approval_id) ?? null),
    ...withList('files', packageOf(d.id)),
  })),
});

/** `{[key]: list}`, or nothing when the list is empty (the document leaves it out). */
const withList = <K extends string, T>(key: K, list: T[]) =>
  (list.length ? { [key]: list } : {}) as Partial<Record<K, T[]>>;
