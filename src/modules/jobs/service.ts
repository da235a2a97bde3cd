import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { keysetPage } from '../../db/keyset.js';
import { normaliseInstant, openPage, type Page, type PageWindow } from '../../domain/page.js';
import { mediaPathOf } from '../../media/paths.js';
import type { FeedQuery } from '../activity/feed.js';
import { DEFAULT_LIMIT, feedList } from '../activity/schemas.js';
import type { GenerationJob } from './schemas.js';

const JOBS = feedList('jobs');

function listJobs(db: Db, productionId: number, window: PageWindow, before: string | undefined) {
  let q = db
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
      'j.updated_at',
      'j.media_id',
      'm.storage_key',
    ]);
  if (window.since !== undefined) q = q.where('j.updated_at', '>', window.since);
  if (before !== undefined) q = q.where('j.created_at', '<', before);
  q = keysetPage(q, ['j.created_at', 'j.id'], 'desc', window);
  return q.orderBy('j.created_at', 'desc').orderBy('j.id', 'desc').execute();
}

export async function recentJobs(
  ctx: AppContext,
  principal: Principal,
  query: FeedQuery = {},
): Promise<Page<GenerationJob>> {
  const { window, close } = openPage(JOBS, principal.productionId, { ...query }, DEFAULT_LIMIT);
  const rows = await listJobs(
    ctx.db,
    principal.productionId,
    window,
    normaliseInstant('before', query.before),
  );
  return close(
    rows,
    (j) => [j.created_at, j.id],
    (j): GenerationJob => ({
      id: j.id,
      kind: j.kind,
      model: j.model,
      prompt: j.prompt,
      status: j.status,
      media_path: mediaPathOf(j.storage_key),
      media_id: j.storage_key ? j.media_id : null,
      created_at: j.created_at,
      finished_at: j.finished_at,
      updated_at: j.updated_at ?? j.created_at,
    }),
  );
}
