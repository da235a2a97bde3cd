import type { Db } from '../../db/index.js';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';
import { SCENE_COLUMNS } from './scene-row.js';

/** Scenes in script order, with their episode and the production's format, in one query; one page of them. */
export function listScenes(db: Db, productionId: number, window: PageWindow) {
  let q = db
    .selectFrom('nodes as n')
    .innerJoin('productions as p', 'p.id', 'n.production_id')
    .leftJoin('episodes as e', 'e.id', 'n.episode_id')
    .where('n.production_id', '=', productionId)
    .where('n.kind', '=', 'scene')
    .select([...SCENE_COLUMNS, 'n.position', 'n.updated_at', 'n.retired_at']);
  q = changedSince(q, 'n.updated_at', 'n.retired_at', window.since);
  q = keysetPage(q, ['n.position', 'n.id'], 'asc', window);
  return q.orderBy('n.position').orderBy('n.id').execute();
}

/** The production's format and its episode ids, in one query. */
export async function formatAndEpisodes(db: Db, productionId: number) {
  const rows = await db
    .selectFrom('productions as p')
    .leftJoin('episodes as e', 'e.production_id', 'p.id')
    .where('p.id', '=', productionId)
    .select(['p.format', 'p.current_episode_id', 'e.id as episode_id'])
    .execute();
  return {
    format: rows[0]?.format ?? 'single',
    currentEpisodeId: rows[0]?.current_episode_id ?? null,
    episodeIds: new Set(rows.map((r) => r.episode_id).filter((id): id is number => id !== null)),
  };
}
