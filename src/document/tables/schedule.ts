import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import type { RowContext } from './row-context.js';

/** Shoot days; their strips are the scenes shot that day, in order. */

export type DocShootDay = Required<ProductionDocument>['shoot_days'][number];

export const SHOOT_DAY_COLUMNS = {
  day_number: 'integer',
  date: 'text',
  general_call: 'text',
  status: 'text',
} satisfies ColumnTypes<'shoot_days'>;

/** A day without a ref is known by its number and date. */
export const shootDayKey = (d: { ref?: string | null; day_number: number; date: string }): string =>
  d.ref ?? `day ${d.day_number} ${d.date}`;

export const shootDayRow = <I extends Id>(d: DocShootDay, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: d.ref ?? null,
  day_number: d.day_number,
  date: d.date,
  general_call: d.general_call ?? null,
  status: d.status ?? 'scheduled',
});
