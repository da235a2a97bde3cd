import type { Db } from '../../db/index.js';

const NONE = [-1];
const ids = (list: readonly number[]) => (list.length ? [...list] : NONE);

export const SUBMISSIONS_SHOWN = 50;

/** The engagement's newest submissions (one query), then their media (one query). */
export async function submissionsOf(db: Db, productionId: number, engagementId: number) {
  const items = await db
    .selectFrom('work_items')
    .where('production_id', '=', productionId)
    .where('engagement_id', '=', engagementId)
    .select([
      'id',
      'delivery_id',
      'title',
      'created_at',
      'status',
      'review_note',
      'reviewed_by',
      'reviewed_at',
    ])
    .orderBy('id', 'desc')
    .limit(SUBMISSIONS_SHOWN)
    .execute();
  const media = await db
    .selectFrom('media')
    .where('production_id', '=', productionId)
    .where('work_item_id', 'in', ids(items.map((i) => i.id)))
    .where('uploader_engagement_id', '=', engagementId)
    .select(['id', 'work_item_id', 'label', 'kind', 'content_type'])
    .orderBy('id')
    .execute();
  return { items, media };
}

export async function engagementExists(db: Db, productionId: number, engagementId: number) {
  const row = await db
    .selectFrom('engagements')
    .where('production_id', '=', productionId)
    .where('id', '=', engagementId)
    .select('id')
    .executeTakeFirst();
  return row !== undefined;
}
