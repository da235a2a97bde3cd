import { EPOCH, stampOf } from '../../db/updated-at.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../errors.js';
import { groupBy } from '../../util/group-by.js';
import { sceneRefOf } from '../scenes/scene-row.js';
import { formatAndEpisodes } from '../scenes/repository.js';
import * as repo from './repository.js';
import type { ShootDay } from './schemas.js';

export async function listSchedule(
  ctx: AppContext,
  principal: Principal,
  episodeIds: readonly number[] = [],
): Promise<ShootDay[]> {
  const pid = principal.productionId;
  const [production, days, strips] = await Promise.all([
    formatAndEpisodes(ctx.db, pid),
    repo.listDays(ctx.db, pid),
    repo.listStrips(ctx.db, pid),
  ]);
  const episodic = production.format === 'episodic';
  const marking = episodic && episodeIds.length > 0;
  if (marking) {
    const unknown = episodeIds.find((id) => !production.episodeIds.has(id));
    if (unknown !== undefined) throw errors.invalid('episode_id', `no episode ${unknown} in this production`);
  }
  const wanted = new Set(episodeIds);
  const stripsOf = groupBy(strips, (s) => s.shoot_day_id);
  return days.map((d) => {
    const scenes = (stripsOf.get(d.id) ?? []).map((s) => ({
      ...sceneRefOf(s, production.format),
      ...(marking ? { marked: s.episode_id !== null && wanted.has(s.episode_id) } : {}),
    }));
    return {
      id: d.id,
      day_number: d.day_number,
      date: d.date,
      general_call: d.general_call,
      status: d.status,
      scenes,
      updated_at: stampOf(d.updated_at, EPOCH),
      ...(marking ? { marked: scenes.some((s) => s.marked) } : {}),
    };
  });
}
