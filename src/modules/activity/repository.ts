import type { Db } from '../../db/index.js';
import { keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';

/** Activity entries never change once written: `updated_since` and `before` bound their time. */
export function listActivity(db: Db, productionId: number, window: PageWindow, before: string | undefined) {
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
