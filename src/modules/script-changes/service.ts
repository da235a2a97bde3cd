import { stampOf } from '../../db/updated-at.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../errors.js';
import { episodeFields } from '../scenes/episode.js';
import { sceneRefOf } from '../scenes/scene-row.js';
import { formatAndEpisodes } from '../scenes/repository.js';
import * as repo from './repository.js';
import type { ScriptChange } from './schemas.js';

export interface ScriptChangeQuery {
  status?: ScriptChange['status'] | 'all';
  episode_id?: number;
  all_episodes?: 'true' | 'false' | '1' | '0';
}

export async function listScriptChanges(
  ctx: AppContext,
  principal: Principal,
  query: ScriptChangeQuery = {},
): Promise<ScriptChange[]> {
  const pid = principal.productionId;
  const production = await formatAndEpisodes(ctx.db, pid);
  const episodic = production.format === 'episodic';
  let episodeId: number | undefined;
  if (episodic) {
    const widen = query.all_episodes === 'true' || query.all_episodes === '1';
    if (widen && query.episode_id !== undefined) {
      throw errors.invalid('all_episodes', 'cannot be combined with episode_id');
    }
    if (query.episode_id !== undefined) {
      if (!production.episodeIds.has(query.episode_id)) {
        throw errors.invalid('episode_id', `no episode ${query.episode_id} in this production`);
      }
      episodeId = query.episode_id;
    } else if (!widen) {
      episodeId = production.currentEpisodeId ?? undefined;
    }
  }
  const status = query.status ?? 'pending';
  const rows = await repo.listScriptChanges(ctx.db, pid, {
    status: status === 'all' ? undefined : status,
    episodeId,
  });
  return rows.map((c) => ({
    id: c.id,
    change: c.change,
    summary: c.summary,
    status: c.status,
    detected_at: c.detected_at,
    updated_at: stampOf(c.updated_at, c.detected_at),
    scene:
      c.scene_id === null || c.scene_id === undefined
        ? null
        : {
            ...sceneRefOf(
              {
                id: c.scene_id,
                number: c.scene_number,
                slugline: c.scene_slugline,
                episode_id: c.scene_episode_id ?? null,
                episode_code: c.scene_episode_code ?? null,
              },
              production.format,
            ),
            status: c.scene_status ?? 'planned',
          },
    ...episodeFields(production.format, c.episode_id, c.episode_code ?? null),
  }));
}
