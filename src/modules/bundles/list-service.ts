import { Clamp, type NodeGrantKind } from '../../auth/clamp.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { MAX_PAGE, openPage, type Page, type PagedList } from '../../domain/page.js';
import { sceneRefOf } from '../scenes/scene-row.js';
import type { BundleEntry, BundleListQuery } from './list-schemas.js';
import * as repo from './repository.js';

/**
 * The bundles a key may fetch: scenes in script order, then characters in cast order. A page
 * is keyed by (kind's rank, position, id), so writes during a walk never skip or repeat one.
 */
const BUNDLES: PagedList = { name: 'bundles', key: ['int', 'int', 'int'], maxLimit: MAX_PAGE };
const KINDS: readonly NodeGrantKind[] = ['scene', 'character'];

type NodeRow = Awaited<ReturnType<typeof repo.bundleNodes>>[number];

const isoOrNull = (at: string | null | undefined): string | null =>
  at === null || at === undefined ? null : new Date(Date.parse(at)).toISOString();

function toEntry(kind: NodeGrantKind, row: NodeRow, expiresAt: string | null): BundleEntry {
  const expires_at = isoOrNull(expiresAt);
  if (kind === 'character') {
    return { kind, node_id: row.id, label: row.label, status: row.status, expires_at };
  }
  return { kind, ...sceneRefOf(row, row.format), status: row.status, expires_at };
}

/**
 * Through the one clamp, judged for this request: a production-wide key reaches every live
 * scene and character of its production; an engagement-bound key exactly the nodes its live
 * scene and character grants name (revoked or expired grants, archived engagements: nothing).
 * At most one query per kind, plus the clamp's one for an engagement.
 */
export async function listBundles(
  ctx: AppContext,
  principal: Principal,
  query: BundleListQuery = {},
): Promise<Page<BundleEntry>> {
  const clamp = await Clamp.load(ctx.db, principal, { kinds: KINDS, departments: false });
  const { window, close } = openPage(BUNDLES, principal.productionId, { ...query });
  // the cursor's key is all whole numbers (BUNDLES.key), checked when it was opened
  const [fromRank = 0, ...fromKey] = (window.after ?? []) as number[];
  const rows: Array<{ rank: number; kind: NodeGrantKind; row: NodeRow; expiresAt: string | null }> = [];
  for (const [rank, kind] of KINDS.entries()) {
    if (rank < fromRank) continue;
    // one row more than the page tells whether another page follows
    const room = window.limit === undefined ? undefined : window.limit + 1 - rows.length;
    if (room !== undefined && room <= 0) break;
    const reach = clamp.productionWide ? null : clamp.grantedNodeExpiry(kind);
    if (reach !== null && reach.size === 0) continue;
    const after = rank === fromRank && window.after !== undefined ? fromKey : undefined;
    const found = await repo.bundleNodes(
      ctx.db,
      principal.productionId,
      kind,
      reach && [...reach.keys()],
      after,
      room,
    );
    for (const row of found) rows.push({ rank, kind, row, expiresAt: reach?.get(row.id) ?? null });
  }
  return close(
    rows,
    (r) => [r.rank, r.row.position, r.row.id],
    (r) => toEntry(r.kind, r.row, r.expiresAt),
  );
}
