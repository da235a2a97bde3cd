import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { keysetPage } from '../../db/keyset.js';
import { normaliseInstant, openPage, type Page, type PageQuery, type PageWindow } from '../../domain/page.js';
import { DEFAULT_LIMIT, feedList, type ActivityEntry } from './schemas.js';

const ACTIVITY = feedList('activity');

export interface FeedQuery extends PageQuery {
  before?: string;
}

/** Activity entries never change once written: `updated_since` and `before` bound their time. */
function listActivity(db: Db, productionId: number, window: PageWindow, before: string | undefined) {
  let q = db
    .selectFrom('activity as a')
    // history stays, but a retired node is no longer named (it answers 404 like a missing one)
    .leftJoin('nodes as n', (j) => j.onRef('n.id', '=', 'a.node_id').on('n.retired_at', 'is', null))
    .where('a.production_id', '=', productionId)
    .select(['a.id', 'a.at', 'a.actor', 'a.verb', 'a.summary', 'a.node_id', 'n.label', 'n.kind']);
  if (window.since !== undefined) q = q.where('a.at', '>', window.since);
  if (before !== undefined) q = q.where('a.at', '<', before);
  q = keysetPage(q, ['a.at', 'a.id'], 'desc', window);
  return q.orderBy('a.at', 'desc').orderBy('a.id', 'desc').execute();
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
