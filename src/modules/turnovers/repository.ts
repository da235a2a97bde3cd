import type { Db } from '../../db/index.js';
import { sql } from 'kysely';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';
import type { WorkItemsTable } from '../../db/schema.js';

const NONE = [-1];

/**
 * The granted deliveries in the production's order (pages of position, id). With `since`: those
 * changed after it, or whose grant did (`regranted`), retired ones included.
 */
export function deliveriesByIds(
  db: Db,
  productionId: number,
  ids: readonly number[],
  window: PageWindow,
  regranted: readonly number[],
) {
  let q = db
    .selectFrom('deliveries')
    .where('production_id', '=', productionId)
    .where('id', 'in', ids.length ? [...ids] : NONE)
    .select([
      'id',
      'title',
      'status',
      'due',
      'external_to',
      'spec',
      'sent_at',
      'position',
      'updated_at',
      'retired_at',
    ]);
  q = changedSince(
    q,
    'updated_at',
    'retired_at',
    window.since,
    () => sql`id in (${sql.join(regranted.length ? regranted : NONE)})`,
  );
  q = keysetPage(q, ['position', 'id'], 'asc', window);
  return q.orderBy('position').orderBy('id').execute();
}

export function findDelivery(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('deliveries')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('retired_at', 'is', null)
    .select(['id', 'title'])
    .executeTakeFirst();
}

export interface NewWorkItem {
  production_id: number;
  delivery_id: number;
  engagement_id: number;
  title: string;
  note: string;
  status: WorkItemsTable['status'];
  created_by: string;
  created_at: string;
}

export async function insertWorkItem(db: Db, row: NewWorkItem): Promise<number> {
  const out = await db.insertInto('work_items').values(row).returning('id').executeTakeFirstOrThrow();
  return out.id;
}
