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

/**
 * The scenes a person may mean by what they typed (the CLI's scene options): the one with this
 * id, the one with this ref, the live ones with this number (any case) in the named episodes
 * (an episode's code or ref; in any episode when none is named). Each with its episode.
 */
export function scenesNamed(
  db: Db,
  productionId: number,
  by: { id?: number; ref?: string; number?: { text: string; episode?: string } },
) {
  return db
    .selectFrom('nodes as n')
    .leftJoin('episodes as e', 'e.id', 'n.episode_id')
    .where('n.production_id', '=', productionId)
    .where('n.kind', '=', 'scene')
    .where((eb) => {
      const any = [];
      if (by.id !== undefined) any.push(eb('n.id', '=', by.id));
      if (by.ref !== undefined) any.push(eb('n.ref', '=', by.ref));
      if (by.number) {
        const { text, episode } = by.number;
        let number = eb.and([
          eb(eb.fn('upper', ['n.number']), '=', text.toUpperCase()),
          eb('n.retired_at', 'is', null),
        ]);
        if (episode !== undefined)
          number = eb.and([number, eb.or([eb('e.code', '=', episode), eb('e.ref', '=', episode)])]);
        any.push(number);
      }
      return eb.or(any);
    })
    .select(['n.id', 'n.ref', 'n.number', 'n.label', 'e.code as episode_code', 'e.ref as episode_ref'])
    .orderBy('n.position')
    .orderBy('n.id')
    .execute();
}

/** Whether the production has an episode with this code or ref. */
export async function hasEpisode(db: Db, productionId: number, episode: string): Promise<boolean> {
  const row = await db
    .selectFrom('episodes')
    .where('production_id', '=', productionId)
    .where((eb) => eb.or([eb('code', '=', episode), eb('ref', '=', episode)]))
    .select('id')
    .executeTakeFirst();
  return row !== undefined;
}
