import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { parseJson } from '../../db/values.js';
import { episodeFields } from './episode.js';
import * as repo from './repository.js';
import type { Scene } from './schemas.js';

export async function listScenes(ctx: AppContext, principal: Principal): Promise<Scene[]> {
  const rows = await repo.listScenes(ctx.db, principal.productionId);
  return rows.map((s) => ({
    node_id: s.id,
    number: s.number ?? '',
    slugline: s.slugline ?? '',
    synopsis: s.synopsis ?? '',
    status: s.status as Scene['status'],
    revision_color: s.revision_color ?? 'white',
    elements: parseJson<Record<string, string[]>>(s.elements, {}),
    ...episodeFields(s.format, s.episode_id, s.episode_code),
  }));
}
