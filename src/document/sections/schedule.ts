import { idOf, same, type Id } from '../sync/cells.js';
import { occurrenceKeys, withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { zip } from '../../util/zip.js';
import { diffKeyed, madeUpKeys, type KeyedDiff } from '../sync/keyed.js';
import { insertRows } from '../sync/write.js';

/*
 * Shoot days (by ref, or by `day <number> <date>` when they have none) and their strips, the
 * scenes shot that day in order. The API never writes them: a day that left the document is
 * deleted.
 */

export class ScheduleSection {
  days!: KeyedDiff<'shoot_days'>;
  private readonly stripsWanted = new Map<string, Id[]>();

  async diff(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const p = ctx.productionId;
    const stored =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('shoot_days')
            .where('production_id', '=', pid)
            .select(['id', 'ref', 'day_number', 'date', 'general_call', 'status'])
            .orderBy('id')
            .execute();
    const strips = new Map<number, number[]>();
    if (pid !== null) {
      for (const s of await ctx.db
        .selectFrom('shoot_strips')
        .where('production_id', '=', pid)
        .select(['shoot_day_id', 'scene_node_id'])
        .orderBy('shoot_day_id')
        .orderBy('position')
        .orderBy('id')
        .execute()) {
        const list = strips.get(s.shoot_day_id);
        if (list) list.push(s.scene_node_id);
        else strips.set(s.shoot_day_id, [s.scene_node_id]);
      }
    }
    const natural = (d: { day_number: number; date: string }) => `day ${d.day_number} ${d.date}`;
    const storedRows = withOccurrenceKeys(stored, (d) => d.ref ?? natural(d)).map(([d, key]) => ({
      id: d.id,
      key,
      values: d,
    }));
    const days = ctx.doc.shoot_days ?? [];
    const wantedDays = zip(
      days,
      madeUpKeys(
        'day',
        storedRows,
        days.map((d) => d.ref),
        occurrenceKeys(days, (d) => d.ref ?? natural(d)),
      ),
    );
    for (const [d, key] of wantedDays) {
      this.stripsWanted.set(
        key,
        (d.scenes ?? []).map((s) => ctx.need(s)),
      );
    }
    this.days = diffKeyed(ctx, {
      kind: 'shoot_days',
      table: 'shoot_days',
      columns: { day_number: 'integer', date: 'text', general_call: 'text', status: 'text' },
      stored: storedRows,
      wanted: wantedDays.map(([d, key]) => ({
        key,
        ref: d.ref ?? null,
        row: {
          production_id: p,
          ref: d.ref ?? null,
          day_number: d.day_number,
          date: d.date,
          general_call: d.general_call ?? null,
          status: d.status ?? 'scheduled',
        },
      })),
      children: (s, w) => {
        const have = strips.get(s.id) ?? [];
        const want = this.stripsWanted.get(w.key) ?? [];
        return have.length === want.length && have.every((id, i) => same(id, want[i])) ? [] : ['scenes'];
      },
    });
  }

  settle(ctx: SyncContext): void {
    for (const r of this.days.removed) {
      this.days.deletes.push(r.id);
      ctx.record('shoot_days', 'deleted', r.key, r.id);
    }
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.days.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.days.write(ctx);
    const rewrite = this.days.updates.filter((u) => u.children.length).map((u) => u.id);
    for (let i = 0; i < rewrite.length; i += 1000) {
      await ctx.db
        .deleteFrom('shoot_strips')
        .where('shoot_day_id', 'in', rewrite.slice(i, i + 1000))
        .execute();
    }
    const pid = idOf(ctx.productionId);
    const days: Array<{ id: Id; key: string }> = [
      ...this.days.creates.map((c) => ({ id: c.pending, key: c.key })),
      ...this.days.updates.filter((u) => u.children.length).map((u) => ({ id: u.id, key: u.key })),
    ];
    await insertRows(
      ctx.db,
      'shoot_strips',
      days.flatMap(({ id, key }) =>
        (this.stripsWanted.get(key) ?? []).map((scene, position) => ({
          production_id: pid,
          shoot_day_id: idOf(id),
          scene_node_id: idOf(scene),
          position,
        })),
      ),
    );
  }
}
