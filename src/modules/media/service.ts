import { Clamp, MEDIA_NEED, reachesMedia, seesMedia } from '../../auth/clamp.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { stampOf } from '../../db/updated-at.js';
import { toInt } from '../../db/values.js';
import { errors, isAppError } from '../../errors.js';
import { actorOf } from '../../auth/audit-actor.js';
import { recordAudit } from '../../auth/audit-record.js';
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
/** What the content route streams: the stored file, its type and tag, and the label it is named by. */
export interface MediaFile {
  storageKey: string;
  contentType: string;
  sha256: string;
  label: string;
}

export async function mediaContent(ctx: AppContext, principal: Principal, id: number): Promise<MediaFile> {
  const m = await visibleMedia(ctx, principal, id);
  return { storageKey: m.storage_key, contentType: m.content_type, sha256: m.sha256, label: m.label };
}

/**
 * The content route's answer, with the audit trail's note of a vendor's download: every fetch by
 * an engagement-bound key is recorded, `package.download` for a file of a delivery's package,
 * `media.download` for anything else, and a refused one (404, in or out of reach alike, so the
 * refusal still costs the statements a missing id does) as `media.download` refused. A
 * found file's row is written by `beforeAnswer`, once the answer's status is known and before
 * any byte is sent: a range outside the file (416) is recorded refused. A production-wide key's
 * reads are not recorded: they cost no write.
 */
export async function downloadMedia(
  ctx: AppContext,
  principal: Principal,
  id: number,
): Promise<MediaFile & { beforeAnswer?: (status: number) => Promise<void> }> {
  if (principal.engagementId === null) return mediaContent(ctx, principal, id);
  const audit = (action: 'media.download' | 'package.download', outcome: 'ok' | 'refused', summary: string) =>
    recordAudit(ctx.db, {
      productionId: principal.productionId,
      actor: actorOf(principal),
      action,
      object: { type: 'media', id },
      summary,
      outcome,
    });
  let m;
  try {
    m = await visibleMedia(ctx, principal, id);
  } catch (err) {
    if (isAppError(err) && err.status === 404)
      await audit('media.download', 'refused', `media ${id}: not found or out of reach`);
    throw err;
  }
  const inPackage = m.delivery_id !== null && m.work_item_id === null;
  const action = inPackage ? 'package.download' : 'media.download';
  const what = inPackage ? `"${m.label}" of the package of delivery ${m.delivery_id}` : `"${m.label}"`;
  return {
    storageKey: m.storage_key,
    contentType: m.content_type,
    sha256: m.sha256,
    label: m.label,
    beforeAnswer: (status) =>
      status === 416
        ? audit(action, 'refused', `${what}: the range asked for lies outside the file`)
        : audit(action, 'ok', what),
  };
}
