import type { Db } from '../../db/index.js';
import type { ScriptChangesTable } from '../../db/schema.js';

export interface ScriptChangeFilter {
  status?: ScriptChangesTable['status'];
  episodeId?: number;
}

export function listScriptChanges(db: Db, productionId: number, filter: ScriptChangeFilter) {
  let q = db
    .selectFrom('script_changes as c')
    .leftJoin('nodes as s', 's.id', 'c.scene_node_id')
    .leftJoin('episodes as e', 'e.id', 'c.episode_id')
    .leftJoin('episodes as se', 'se.id', 's.episode_id')
    .where('c.production_id', '=', productionId)
    .select([
      'c.id',
      'c.change',
      'c.summary',
      'c.status',
      'c.detected_at',
      'c.updated_at',
      'c.episode_id',
      'e.code as episode_code',
      's.id as scene_id',
      's.number as scene_number',
      's.slugline as scene_slugline',
      's.status as scene_status',
      's.episode_id as scene_episode_id',
      'se.code as scene_episode_code',
    ]);
  if (filter.status !== undefined) q = q.where('c.status', '=', filter.status);
  if (filter.episodeId !== undefined) q = q.where('c.episode_id', '=', filter.episodeId);
  return q.orderBy('c.detected_at', 'desc').orderBy('c.id', 'desc').execute();
}
