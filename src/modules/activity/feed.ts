import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { clampLimit, type ActivityEntry } from './schemas.js';

function listActivity(db: Db, productionId: number, limit: number) {
  return (
    db
      .selectFrom('activity as a')
      // history stays, but a retired node is no longer named (it answers 404 like a missing one)
      .leftJoin('nodes as n', (j) => j.onRef('n.id', '=', 'a.node_id').on('n.retired_at', 'is', null))
      .where('a.production_id', '=', productionId)
      .select(['a.id', 'a.at', 'a.actor', 'a.verb', 'a.summary', 'a.node_id', 'n.label', 'n.kind'])
      .orderBy('a.at', 'desc')
      .orderBy('a.id', 'desc')
      .limit(limit)
      .execute()
  );
}

export async function activityFeed(
  ctx: AppContext,
  principal: Principal,
  limit?: number,
): Promise<ActivityEntry[]> {
  const rows = await listActivity(ctx.db, principal.productionId, clampLimit(limit));
  return rows.map((a) => ({
    id: a.id,
    at: a.at,
    actor: a.actor,
    verb: a.verb,
    summary: a.summary,
    node:
      a.node_id === null || a.label === null || a.label === undefined
        ? null
        : { node_id: a.node_id, label: a.label, kind: a.kind ?? '' },
  }));
}
