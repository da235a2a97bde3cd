import { Clamp } from '../../auth/clamp.js';
import { asEngagement, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../errors.js';
import { groupBy } from '../../util/group-by.js';
import { listEngagements } from '../admin/service.js';
import { listBundles } from '../bundles/service.js';
import { characterBundle, sceneBundle } from '../bundles/service.js';
import { mediaContent } from '../media/service.js';
import { purchaseOrders } from '../purchase-orders/service.js';
import { allTurnovers } from '../turnovers/service.js';
import { reviewOf } from '../turnovers/submission-list.js';
import * as repo from './repository.js';
import type { VendorView } from './schemas.js';

/*
 * What an engagement's keys see. Each answer comes from the very service the vendor's own
 * request runs, called with an administrator seen as the engagement (asEngagement), so the
 * view cannot drift from the clamp: there is no second copy of a grant rule.
 */

/** The caller seen as the engagement (archived ones too); 404 outside the production. One query. */
async function vendorOf(ctx: AppContext, admin: Principal, engagementId: number): Promise<Principal> {
  if (!(await repo.engagementExists(ctx.db, admin.productionId, engagementId)))
    throw errors.notFound('engagement');
  return asEngagement(admin, engagementId);
}

function submissionsView(found: Awaited<ReturnType<typeof repo.submissionsOf>>): VendorView['submissions'] {
  const mediaOf = groupBy(found.media, (m) => m.work_item_id);
  return found.items.map((w) => ({
    id: w.id,
    delivery_id: w.delivery_id,
    title: w.title,
    created_at: w.created_at,
    status: w.status,
    review: reviewOf(w),
    media: (mediaOf.get(w.id) ?? []).map((m) => ({
      id: m.id,
      label: m.label,
      kind: m.kind,
      content_type: m.content_type,
    })),
  }));
}

/**
 * See as vendor: the engagement, and what its widest key is answered right now by the vendor
 * routes' own services (bundles, turnovers, purchase orders), plus its own submissions, which
 * the clamp lets it fetch while the engagement is not archived. A fixed number of queries.
 */
export async function engagementView(
  ctx: AppContext,
  admin: Principal,
  engagementId: number,
): Promise<VendorView> {
  const [engagement] = await listEngagements(ctx.db, admin.productionId, {
    includeArchived: true,
    ids: [engagementId],
  });
  if (!engagement) throw errors.notFound('engagement');
  const vendor = asEngagement(admin, engagementId);
  const judgedAt = new Date();
  // whether the engagement reaches anything at all (archived: nothing), asked of the clamp itself
  const reaches = (await Clamp.load(ctx.db, vendor, { kinds: ['own_po'], departments: false }, judgedAt))
    .active;
  const [bundles, turnovers, money, submitted] = await Promise.all([
    listBundles(ctx, vendor),
    allTurnovers(ctx, vendor),
    purchaseOrders(ctx, vendor),
    reaches ? repo.submissionsOf(ctx.db, admin.productionId, engagementId) : { items: [], media: [] },
  ]);
  return {
    engagement,
    reaches,
    judged_at: judgedAt.toISOString(),
    bundles: bundles.items,
    turnovers,
    purchase_orders: money,
    submissions: submissionsView(submitted),
  };
}

/** The scene bundle exactly as the engagement's key is answered it (404 alike when it is not). */
export async function viewSceneBundle(
  ctx: AppContext,
  admin: Principal,
  engagementId: number,
  nodeId: number,
) {
  return sceneBundle(ctx, await vendorOf(ctx, admin, engagementId), nodeId);
}

export async function viewCharacterBundle(
  ctx: AppContext,
  admin: Principal,
  engagementId: number,
  nodeId: number,
) {
  return characterBundle(ctx, await vendorOf(ctx, admin, engagementId), nodeId);
}

/** A media object's bytes if, and only if, the engagement's key may fetch them. */
export async function viewMediaContent(
  ctx: AppContext,
  admin: Principal,
  engagementId: number,
  mediaId: number,
) {
  return mediaContent(ctx, await vendorOf(ctx, admin, engagementId), mediaId);
}
