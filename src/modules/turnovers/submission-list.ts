import { Clamp } from '../../auth/clamp.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { MAX_PAGE, openPage, type Page, type PagedList } from '../../domain/page.js';
import { groupBy } from '../../util/group-by.js';
import * as repo from './repository.js';
import type { DeliveryFile, Review, SubmissionListQuery, SubmissionRow } from './schemas.js';

/** Submissions, like turnovers, are reached through delivery grants alone. */
const DELIVERY_DOOR = { kinds: ['delivery'], departments: false } as const;

const SUBMISSIONS: PagedList = { name: 'submissions', key: ['int'], maxLimit: MAX_PAGE };

type FileRow = Parameters<typeof toDeliveryFile>[0];
type ItemRow = Awaited<ReturnType<typeof repo.submissionsIn>>[number];

/**
 * What the clamp lets this key list: a production-wide key every submission of its production;
 * an engagement its own work on the deliveries it holds a live read or submit grant on now
 * (with `since`, also those a re-import retired, so a mirror learns to drop them). Null: nothing
 * (an archived engagement, or one with no live delivery grant).
 */
function reachOf(clamp: Clamp, since: string | undefined): repo.SubmissionReach | null {
  if (clamp.productionWide) return { deliveryIds: null, engagementId: null, regranted: [] };
  if (!clamp.active || clamp.engagementId === null) return null;
  const granted = clamp.grantedDeliveries();
  const deliveryIds = [...granted.keys(), ...(since === undefined ? [] : clamp.retiredDeliveryIds)];
  if (deliveryIds.length === 0) return null;
  const regranted =
    since === undefined
      ? []
      : [...granted].filter(([, g]) => g.grantedAt !== null && g.grantedAt > since).map(([id]) => id);
  return { deliveryIds, engagementId: clamp.engagementId, regranted };
}

/** A submission's review, from its row: its status is the decision; null until reviewed. */
export function reviewOf(item: {
  status: string;
  review_note: string | null;
  reviewed_by: string | null;
  reviewed_at: string | null;
}): Review | null {
  if (item.reviewed_at === null || (item.status !== 'accepted' && item.status !== 'changes_requested')) {
    return null;
  }
  return {
    decision: item.status,
    note: item.review_note ?? '',
    reviewed_by: item.reviewed_by,
    reviewed_at: item.reviewed_at,
  };
}

/** A stored file as a package or a submission lists it. */
export const toDeliveryFile = (m: {
  id: number;
  label: string;
  kind: string;
  content_type: string;
  size: number | string;
  sha256: string;
}): DeliveryFile => ({
  id: m.id,
  label: m.label,
  kind: m.kind,
  content_type: m.content_type,
  size: Number(m.size),
  sha256: m.sha256,
});

/** A submission as the lists show it, from its row and its files' rows. */
export function toSubmissionRow(
  item: Omit<ItemRow, 'retired_at'> & { retired_at?: string | null },
  files: readonly FileRow[],
): SubmissionRow {
  return {
    id: item.id,
    delivery_id: item.delivery_id,
    engagement_id: item.engagement_id,
    status: item.status,
    title: item.title,
    note: item.note,
    media: files.map(toDeliveryFile),
    created_at: item.created_at,
    review: reviewOf(item),
    ...(item.retired_at ? { retired_at: item.retired_at } : {}),
  };
}

/**
 * The submissions this key may list, oldest first, each with its files (id, type, size,
 * SHA-256: enough to fetch and check the bytes). Through the one clamp, judged for this
 * request: a vendor never sees another engagement's work, and a revoked or expired delivery
 * grant or an archived engagement takes its submissions out of the very next answer. The
 * clamp's query, one for the submissions and one for their files, whatever their number.
 */
export async function listSubmissions(
  ctx: AppContext,
  principal: Principal,
  query: SubmissionListQuery = {},
): Promise<Page<SubmissionRow>> {
  const clamp = await Clamp.load(ctx.db, principal, DELIVERY_DOOR);
  const { window, close } = openPage(SUBMISSIONS, principal.productionId, { ...query });
  const reach = reachOf(clamp, window.since);
  if (reach === null) return { items: [], next: null };
  const pid = principal.productionId;
  const items = await repo.submissionsIn(ctx.db, pid, reach, query.delivery_id, window);
  const page = close(
    items,
    (w) => [w.id],
    (w) => w,
  );
  const files = await repo.submittedFiles(
    ctx.db,
    pid,
    page.items.map((w) => w.id),
  );
  // a vendor's own work is uploaded by its own engagement; anything else is never shown to it
  const shown = files.filter(
    (m) => reach.engagementId === null || m.uploader_engagement_id === reach.engagementId,
  );
  const filesOf = groupBy(shown, (m) => m.work_item_id);
  return { items: page.items.map((w) => toSubmissionRow(w, filesOf.get(w.id) ?? [])), next: page.next };
}
