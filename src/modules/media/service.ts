import { Clamp, MEDIA_NEED, reachesMedia, seesMedia } from '../../auth/clamp.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { stampOf } from '../../db/updated-at.js';
import { toInt } from '../../db/values.js';
import { errors } from '../../errors.js';
import * as repo from './repository.js';
import type { MediaDetail } from './schemas.js';

export const mediaNotFound = () => errors.notFound('media');

/**
 * The media row if this principal may see it; otherwise the one 404 for all cases. For
 * an engagement-bound key a missing id and one out of reach take the same statements (the
 * grants are asked about the id either way), so the time of the 404 says nothing either.
 */
async function visibleMedia(ctx: AppContext, principal: Principal, id: number) {
  const clamp = await Clamp.load(ctx.db, principal, MEDIA_NEED);
  if (clamp.productionWide) {
    const media = await repo.findMedia(ctx.db, principal.productionId, id);
    if (!media) throw mediaNotFound();
    return media;
  }
  const { media, reached } = await repo.findMediaWithReach(ctx.db, principal.productionId, id, (eb) =>
    reachesMedia(eb, clamp, id),
  );
  if (!media || !seesMedia(clamp, media, reached)) throw mediaNotFound();
  return media;
}

export async function getMedia(ctx: AppContext, principal: Principal, id: number): Promise<MediaDetail> {
  const m = await visibleMedia(ctx, principal, id);
  return {
    id: m.id,
    kind: m.kind,
    label: m.label,
    node_id: m.node_id,
    delivery_id: m.delivery_id,
    work_item_id: m.work_item_id,
    created_by: m.created_by,
    created_at: m.created_at,
    updated_at: stampOf(m.updated_at, m.created_at),
    content_type: m.content_type,
    size: toInt(m.size),
    sha256: m.sha256,
  };
}

/** What the content route streams: the caller hands it to the HTTP layer's sendMedia. */
export async function mediaContent(ctx: AppContext, principal: Principal, id: number) {
  const m = await visibleMedia(ctx, principal, id);
  return { storageKey: m.storage_key, contentType: m.content_type, sha256: m.sha256, label: m.label };
}
