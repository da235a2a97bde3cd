import type { Db } from '../../db/index.js';

const NONE = [-1];
const ids = (list: readonly number[]) => (list.length ? [...list] : NONE);

/** The live scenes among these node ids, in script order (one query). */
export function scenesByIds(db: Db, productionId: number, nodeIds: readonly number[]) {
  return db
    .selectFrom('nodes as n')
    .leftJoin('episodes as ep', 'ep.id', 'n.episode_id')
    .where('n.production_id', '=', productionId)
    .where('n.id', 'in', ids(nodeIds))
    .where('n.kind', '=', 'scene')
    .where('n.retired_at', 'is', null)
    .select(['n.id', 'n.number', 'n.slugline', 'n.status', 'ep.code as episode_code'])
    .orderBy('n.position')
    .orderBy('n.id')
    .execute();
}

/** The live characters among these node ids, in the production's order (one query). */
export function charactersByIds(db: Db, productionId: number, nodeIds: readonly number[]) {
  return db
    .selectFrom('nodes')
    .where('production_id', '=', productionId)
    .where('id', 'in', ids(nodeIds))
    .where('kind', '=', 'character')
    .where('retired_at', 'is', null)
    .select(['id', 'label', 'status'])
    .orderBy('position')
    .orderBy('id')
    .execute();
}

export const SUBMISSIONS_SHOWN = 50;

/** The engagement's newest submissions (one query), then their media (one query). */
export async function submissionsOf(db: Db, productionId: number, engagementId: number) {
  const items = await db
    .selectFrom('work_items')
    .where('production_id', '=', productionId)
    .where('engagement_id', '=', engagementId)
    .select(['id', 'delivery_id', 'title', 'created_at'])
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
