import type { Db } from '../../db/index.js';
import { groupBy } from '../../util/group-by.js';
import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ExportContext } from './export-context.js';
import type { RowContext } from './row-context.js';

/** Shoot days; their strips are the scenes shot that day, in order. */

export type DocShootDay = Required<ProductionDocument>['shoot_days'][number];

export const shootDayRow = <I extends Id>(d: DocShootDay, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: d.ref ?? null,
  day_number: d.day_number,
  date: d.date,
  general_call: d.general_call ?? null,
  status: d.status ?? 'scheduled',
});

/** Every shoot day and strip, in the document's order. */
export async function readSchedule(db: Db, pid: number) {
  const [days, strips] = await Promise.all([
    db
      .selectFrom('shoot_days')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('day_number')
      .orderBy('date')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('shoot_strips')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
  ]);
  return { days, strips };
}
export type StoredSchedule = Awaited<ReturnType<typeof readSchedule>>;

export const scheduleRefs = (s: StoredSchedule): Array<string | null> => s.days.map((d) => d.ref);

export function scheduleDoc(s: StoredSchedule, ex: ExportContext) {
  const stripsOf = groupBy(s.strips, (x) => x.shoot_day_id);
  return {
    shoot_days: s.days.map((d): DocShootDay => ({
      ref: ex.refFor(d, 'day'),
      day_number: d.day_number,
      date: d.date,
      general_call: d.general_call,
      status: d.status,
      scenes: (stripsOf.get(d.id) ?? []).flatMap((x) => ex.nodeOf(x.scene_node_id) ?? []),
    })),
  };
}
