import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { changesAfter, headChangeId } from './repository.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type Change, type ChangePage, type ChangesQuery } from './schemas.js';

type ChangeRow = Awaited<ReturnType<typeof changesAfter>>[number];

export const toChange = (r: ChangeRow): Change => ({
  cursor: encodeCursor(Number(r.id)),
  at: r.at,
  kind: r.kind,
  id: r.object_id,
  op: r.op,
  actor: r.actor,
});

/**
 * One page of the production's change feed. With `wait`, an empty page is held until a change
 * commits or the wait ends: each wake-up costs one indexed query, and wake-ups come only from
 * this production's commits (or the watch's poll), so the work per request stays bounded.
 */
export async function readChanges(
  ctx: AppContext,
  principal: Principal,
  query: ChangesQuery,
  signal?: AbortSignal,
): Promise<ChangePage> {
  const pid = principal.productionId;
  const after =
    query.after === undefined
      ? 0
      : query.after === 'now'
        ? await headChangeId(ctx.db, pid)
        : decodeCursor(query.after);
  const limit = Math.min(query.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  const deadline = ctx.clock.now() + Math.min(query.wait ?? 0, ctx.config.feedMaxWaitSeconds) * 1000;
  let open = true;
  for (;;) {
    const rows = await changesAfter(ctx.db, pid, after, limit + 1);
    const left = deadline - ctx.clock.now();
    if (rows.length > 0 || left <= 0 || !open || signal?.aborted) {
      const page = rows.slice(0, limit).map(toChange);
      return {
        changes: page,
        next_cursor: page.at(-1)?.cursor ?? encodeCursor(after),
        more: rows.length > limit,
      };
    }
    open = await ctx.changes.next(pid, after, left, signal);
  }
}
