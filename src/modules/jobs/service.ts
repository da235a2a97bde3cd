import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { normaliseInstant, openPage, type Page } from '../../domain/page.js';
import { mediaPathOf } from '../../media/paths.js';
import type { FeedQuery } from '../activity/service.js';
import { DEFAULT_LIMIT, feedList } from '../activity/schemas.js';
import { listJobs } from './repository.js';
import type { GenerationJob } from './schemas.js';

const JOBS = feedList('jobs');

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
