import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../errors.js';
import type { ServedMedia } from '../../media/store.js';
import { storageKeyOf } from '../../media/paths.js';
import { mediaRestOf } from './media-path.js';
import * as repo from './repository.js';
import type { MediaTicket } from './schemas.js';
import { issueTicket, readTicket, verifyTicket, type TicketClaims } from './ticket.js';

const claimsSeen = new WeakMap<object, TicketClaims | null>();

/**
 * The key a request's ticket (`?t=`) was issued to, when the ticket verifies (signature and
 * expiry; no query): what the file route's rate limit counts under. Null for anything else.
 */
export function ticketKeyOf(ctx: AppContext, request: FastifyRequest): number | null {
  if (!claimsSeen.has(request)) {
    const t = (request.query as Record<string, unknown> | undefined)?.t;
    claimsSeen.set(request, readTicket(ctx.secrets, t));
  }
  return claimsSeen.get(request)?.keyId ?? null;
}

export function mediaTicket(ctx: AppContext, principal: Principal): MediaTicket {
  return issueTicket(ctx, principal);
}

const badTicket = () =>
  errors.unauthorized('missing, invalid or expired media ticket (get one from GET /api/v1/media-ticket)');
export const mediaFileNotFound = () => errors.notFound('media file');

/**
 * What the off-plane route serves for a raw URL and ticket: 401 unless the ticket stands
 * (signature, expiry, key not revoked), 404 for any path outside the ticket's production's
 * media (decided before any lookup) or with no media behind it.
 */
export async function resolveTicketedMedia(
  ctx: AppContext,
  rawUrl: string,
  ticket: unknown,
): Promise<ServedMedia> {
  const claims = await verifyTicket(ctx.secrets, ticket);
  if (!claims) throw badTicket();
  if (!(await repo.keyStillValid(ctx.db, claims.keyId, claims.productionId))) throw badTicket();
  const rest = mediaRestOf(rawUrl);
  if (rest === null) throw mediaFileNotFound();
  const media = await repo.findMediaByKey(
    ctx.db,
    claims.productionId,
    storageKeyOf(claims.productionId, rest),
  );
  if (!media) throw mediaFileNotFound();
  return {
    storageKey: media.storage_key,
    contentType: media.content_type,
    sha256: media.sha256,
    label: media.label,
  };
}
