import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { mediaPathOf } from '../../media/paths.js';
import { clampLimit } from '../activity/schemas.js';
import type { GenerationJob } from './schemas.js';

function listJobs(db: Db, productionId: number, limit: number) {
  return db
    .selectFrom('generation_jobs as j')
    .leftJoin('media as m', 'm.id', 'j.media_id')
    .where('j.production_id', '=', productionId)
    .select([
      'j.id',
      'j.kind',
      'j.model',
      'j.prompt',
      'j.status',
      'j.created_at',
      'j.finished_at',
      'm.storage_key',
    ])
    .orderBy('j.created_at', 'desc')
    .orderBy('j.id', 'desc')
    .limit(limit)
    .execute();
}

export async function recentJobs(
  ctx: AppContext,
  principal: Principal,
  limit?: number,
): Promise<GenerationJob[]> {
  const rows = await listJobs(ctx.db, principal.productionId, clampLimit(limit));
  return rows.map((j) => ({
    id: j.id,
    kind: j.kind as GenerationJob['kind'],
    model: j.model,
    prompt: j.prompt,
    status: j.status,
    media_path: mediaPathOf(j.storage_key),
    created_at: j.created_at,
    finished_at: j.finished_at,
  }));
}
