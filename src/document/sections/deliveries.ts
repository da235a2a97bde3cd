import type { SyncContext } from '../sync/context.js';
import { diffKeyed, storedRows, type KeyedDiff, type StoredRow } from '../sync/keyed.js';
import { orderPositions } from '../sync/order.js';
import { zip } from '../../util/zip.js';
import { referencedByAny } from '../sync/references.js';
import { DELIVERY_COLUMNS, deliveryRow } from '../tables/deliveries.js';
import type { PackageSection } from './package.js';

/*
 * Deliveries: what a vendor turns work over on. A delivery that left the document is retired
 * (archived) when anything refers to it (submissions, media, grants) and deleted otherwise.
 * Its package is the PackageSection's; a change to it reports the delivery updated.
 */

export class DeliveriesSection {
  deliveries!: KeyedDiff<'deliveries'>;
  private readonly retire: number[] = [];

  /** After the packages: a delivery whose package changes counts as updated (`files`). */
  async diff(ctx: SyncContext, packages: PackageSection): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const deliveries =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('deliveries')
            .where('production_id', '=', pid)
            .where('ref', 'is not', null)
            .select([
              'id',
              'ref',
              'title',
              'kind',
              'status',
              'due',
              'from_department_id',
              'to_department_id',
              'external_to',
              'spec',
              'sent_at',
              'gating_approval_id',
              'position',
              'retired_at',
            ])
            .execute();
    const positions = orderPositions(
      (doc.deliveries ?? []).map((d) => d.ref),
      new Map(deliveries.flatMap((d) => (d.ref ? [[d.ref, d.position] as const] : []))),
    );
    this.deliveries = diffKeyed(ctx, {
      kind: 'deliveries',
      table: 'deliveries',
      columns: DELIVERY_COLUMNS,
      stored: storedRows(deliveries, (r) => r.ref),
      wanted: zip(doc.deliveries ?? [], positions).map(([d, position]) => ({
        key: d.ref,
        ref: d.ref,
        row: deliveryRow(d, position, ctx),
      })),
      children: (_, w) => (packages.changed.has(w.key) ? ['files'] : []),
    });
  }

  /** After the engagements have settled (their grants may be what still names a delivery). */
  async settle(ctx: SyncContext): Promise<void> {
    const deliveries = this.deliveries.removed.filter(isLiveRow);
    const ids = deliveries.map((r) => r.id);
    const held = ids.length
      ? await referencedByAny(ctx, ids, [
          ['work_items', 'delivery_id', {}, 'submissions'],
          ['media', 'delivery_id', {}, 'media'],
          ['grants', 'delivery_id', {}, 'grants'],
        ])
      : new Map<number, string>();
    for (const r of deliveries) {
      const by = held.get(r.id);
      if (by) {
        this.retire.push(r.id);
        ctx.record('deliveries', 'retired', r.key, r.id, { reason: `archived; referred to by ${by}` });
      } else {
        this.deliveries.deletes.push(r.id);
        ctx.record('deliveries', 'deleted', r.key, r.id);
      }
    }
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.deliveries.deleteRemoved(ctx);
    for (let i = 0; i < this.retire.length; i += 1000) {
      await ctx.db
        .updateTable('deliveries')
        .set({ retired_at: ctx.now })
        .where('id', 'in', this.retire.slice(i, i + 1000))
        .execute();
    }
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.deliveries.write(ctx);
  }
}

export const isLiveRow = (r: StoredRow<'deliveries'> | StoredRow<'engagements'>) => !r.values.retired_at;
