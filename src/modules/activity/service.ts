import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { normaliseInstant, openPage, type Page, type PageQuery } from '../../domain/page.js';
import { listActivity } from './repository.js';
import { DEFAULT_LIMIT, feedList, type ActivityEntry } from './schemas.js';

const ACTIVITY = feedList('activity');

export interface FeedQuery extends PageQuery {
  before?: string;
}

export async function activityFeed(
  ctx: AppContext,
  principal: Principal,
  query: FeedQuery = {},
): Promise<Page<ActivityEntry>> {
  const { window, close } = openPage(ACTIVITY, principal.productionId, { ...query }, DEFAULT_LIMIT);
  const before = normaliseInstant('before', query.before);
  const rows = await listActivity(ctx.db, principal.productionId, window, before);
  return close(
    rows,
    (a) => [a.at, a.id],
    (a): ActivityEntry => ({
      id: a.id,
      at: a.at,
      actor: a.actor,
      verb: a.verb,
      summary: a.summary,
      node:
        a.node_id === null || a.label === null || a.label === undefined
          ? null
          : { node_id: a.node_id, label: a.label, kind: a.kind ?? '' },
    }),
  );
}
