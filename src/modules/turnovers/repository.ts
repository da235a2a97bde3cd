import type { Db } from '../../db/index.js';
import { sql } from 'kysely';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';

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
  status: string;
  created_by: string;
  created_at: string;
}

export async function insertWorkItem(db: Db, row: NewWorkItem): Promise<number> {
  const out = await db.insertInto('work_items').values(row).returning('id').executeTakeFirstOrThrow();
  return out.id;
}

export interface NewMedia {
  production_id: number;
  storage_key: string;
  kind: string;
  label: string;
  content_type: string;
  size: number;
  sha256: string;
  delivery_id: number;
  work_item_id: number;
  uploader_engagement_id: number;
  created_by: string;
  created_at: string;
}

/** One multi-row insert; ids come back keyed by storage key (unique), not by row order. */
export async function insertMedia(db: Db, rows: readonly NewMedia[]): Promise<Map<string, number>> {
  const out = await db
    .insertInto('media')
    .values(rows.map((r) => ({ ...r, ref: null, node_id: null })))
    .returning(['id', 'storage_key'])
    .execute();
  return new Map(out.map((r) => [r.storage_key, r.id]));
}

/** Compensation when stored bytes could not be made permanent after the commit. */
