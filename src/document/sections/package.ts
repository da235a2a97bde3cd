import type { ChangeLog } from '../../db/change-log.js';
import { insertMedia } from '../../media/rows.js';
import { idOf } from '../sync/cells.js';
import { matchByKey, withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { updateRows } from '../sync/write.js';
import { labelOf, packageKey } from '../tables/turnovers.js';
import type { TurnoverFiles } from './turnover-files.js';

/*
 * Deliveries' packages: the files the production sends. A delivery that lists `files` gets
 * exactly that package; one that does not list them keeps its package as it is (a document
 * written before the package was uploaded through the API takes nothing out of it).
 * - A package file is known by its delivery and its content: a listed file whose bytes the
 *   delivery's package holds (or once held) is that media object again (its label follows the
 *   document, and one taken out is put back); new bytes become a new media object.
 * - A file no longer listed is taken out of the package (`removed_at`): the media object is
 *   kept, for history and for anything that points at it.
 */

interface StoredFile {
  id: number;
  key: string;
  delivery: string;
  label: string;
  removed: boolean;
}

interface NewFile {
  delivery: string;
  rel: string;
  label: string;
}

const display = (delivery: string, label: string) => `${delivery}/${label}`;

export class PackageSection {
  private readonly creates: NewFile[] = [];
  private readonly updates: Array<{ id: number; set: { label: string; removed_at: null } }> = [];
  private readonly takeOut: number[] = [];
  private readonly createdIds: number[] = [];
  /** Deliveries (by ref) whose package this sync changes. */
  readonly changed = new Set<string>();

  constructor(private readonly files: TurnoverFiles) {}

  async diff(ctx: SyncContext): Promise<void> {
    const listed = (ctx.doc.deliveries ?? []).filter((d) => d.files !== undefined);
    if (listed.length) ctx.countsOf('package_files');
    const stored = await this.readStored(ctx, new Set(listed.map((d) => d.ref)));
    const wanted = withOccurrenceKeys(
      listed.flatMap((d) => (d.files ?? []).map((f) => ({ delivery: d.ref, f }))),
      ({ delivery, f }) => packageKey(delivery, this.files.of(f.media).sha256),
    ).map(([{ delivery, f }, key]) => ({ key, delivery, rel: f.media, label: labelOf(f) }));
    const { pairs, creates, removed } = matchByKey(stored, wanted);
    for (const { current, wanted: w } of pairs) {
      const fields = [
        ...(current.label !== w.label ? ['label'] : []),
        ...(current.removed ? ['removed_at'] : []),
      ];
      if (!fields.length) {
        ctx.unchanged('package_files');
        continue;
      }
      this.updates.push({ id: current.id, set: { label: w.label, removed_at: null } });
      this.changed.add(w.delivery);
      ctx.record('package_files', 'updated', display(w.delivery, w.label), current.id, { fields });
    }
    for (const w of creates) {
      this.creates.push(w);
      this.changed.add(w.delivery);
      ctx.record('package_files', 'created', display(w.delivery, w.label), null);
    }
    for (const r of removed) {
      if (r.removed) continue;
      this.takeOut.push(r.id);
      this.changed.add(r.delivery);
      ctx.record('package_files', 'retired', display(r.delivery, r.label), r.id, {
        reason: 'taken out of the package; the media object is kept',
      });
    }
  }

  /**
   * The package files (in, and taken out) of the deliveries the document lists files for:
   * those in the package first, so a listed file pairs with a live one before one taken out.
   */
  private async readStored(ctx: SyncContext, deliveries: ReadonlySet<string>): Promise<StoredFile[]> {
    const pid = ctx.existingProductionId;
    if (pid === null || deliveries.size === 0) return [];
    const rows = await ctx.db
      .selectFrom('media as m')
      .innerJoin('deliveries as d', 'd.id', 'm.delivery_id')
      .where('m.production_id', '=', pid)
      .where('m.work_item_id', 'is', null)
      .where('d.ref', 'is not', null)
      .select(['m.id', 'm.sha256', 'm.label', 'm.removed_at', 'd.ref as delivery'])
      .orderBy('m.id')
      .execute();
    const mine = rows
      .filter((r): r is typeof r & { delivery: string } => r.delivery !== null && deliveries.has(r.delivery))
      .sort((a, b) => Number(a.removed_at !== null) - Number(b.removed_at !== null) || a.id - b.id);
    return withOccurrenceKeys(mine, (r) => packageKey(r.delivery, r.sha256)).map(([r, key]) => ({
      id: r.id,
      key,
      delivery: r.delivery,
      label: r.label,
      removed: r.removed_at !== null,
    }));
  }

  /** After the deliveries are written (a new delivery's files need its id). */
  async write(ctx: SyncContext): Promise<void> {
    const pid = idOf(ctx.productionId);
    const media = [];
    for (const c of this.creates) {
      media.push({
        productionId: pid,
        object: await this.files.stage(pid, c.rel),
        label: c.label,
        owner: { packageOf: idOf(ctx.need(c.delivery)) },
        createdBy: null,
        at: ctx.now,
      });
    }
    this.createdIds.push(...(await insertMedia(ctx.db, media)));
    await updateRows(ctx.db, 'media', this.updates, { label: 'text', removed_at: 'text' });
    for (let i = 0; i < this.takeOut.length; i += 1000) {
      await ctx.db
        .updateTable('media')
        .set({ removed_at: ctx.now })
        .where('id', 'in', this.takeOut.slice(i, i + 1000))
        .execute();
    }
  }

  /** The media objects this sync created (the plan knows them by name only). */
  logCreated(log: ChangeLog): void {
    for (const id of this.createdIds) log.created('media', id);
  }
}
