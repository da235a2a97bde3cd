import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { mediaAnswerHeaders, MediaRequestHeaders, sendMedia } from '../../http/media-response.js';
import { MEDIA_BYTES, NOT_CACHED } from '../../http/reference-headers.js';
import { errorResponses, FILE_MEDIA_TYPES } from '../../http/schemas.js';
import { MediaTicket } from './schemas.js';
import { mediaFileNotFound, mediaTicket, resolveTicketedMedia, ticketKeyOf } from './service.js';
import { perCredentialKey } from '../../http/rate-limit.js';
import { routesOf } from '../../http/define-route.js';

/** GET /api/v1/media-ticket (mounted under the API prefix). */
export async function mediaTicketRoutes(app: FastifyInstance): Promise<void> {
  routesOf(app).get(
    '/media-ticket',
    {
      config: { auth: { scopes: ['read'], surface: 'production' }, responseHeaders: NOT_CACHED(200) },
      schema: {
        operationId: 'getMediaTicket',
        summary: 'A 15-minute ticket for the off-plane file route GET /media/{path}?t=<ticket>',
        description:
          "The ticket opens the key's production's media only and dies when the key is revoked. " +
          'Append it to any `media_path` the API returned: `{base_url}{media_path}?t={ticket}`.',
        tags: ['media'],
        response: { 200: MediaTicket },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return mediaTicket(app.ctx, principalOf(request));
    },
  );
}

/** The off-plane file route at the base URL: trusts the ticket, never a bearer header. */
export async function mediaFileRoutes(app: FastifyInstance): Promise<void> {
  routesOf(app).get(
    '/media/*',
    {
      onSend: mediaAnswerHeaders,
      // stored bytes go out as stored: exact Content-Length and byte ranges (see `compression`)
      compress: false,
      config: {
        auth: 'public',
        responseHeaders: MEDIA_BYTES,
        // counted per the ticket's key; a ticket that does not verify is never counted
        ...perCredentialKey(app.ctx.config.rateLimit, 'media-file', (request) =>
          ticketKeyOf(app.ctx, request),
        ),
      },
      schema: {
        operationId: 'getMediaFileByTicket',
        summary: 'Off-plane file route: stream a media file by its `media_path` and a media ticket',
        description:
          'Outside /api/v1. Query `t`: a ticket from GET /api/v1/media-ticket; any Authorization header is ignored. ' +
          '401 for a missing, forged or expired ticket or one whose key was revoked; 404 for a path outside the ' +
          "ticket's production's media or with no file. Streams with Content-Type, Content-Length, ETag and " +
          'Last-Modified; honours Range (206, 416) and If-None-Match (304).',
        tags: ['media'],
        security: [],
        headers: MediaRequestHeaders,
        querystring: Type.Object({
          // opaque on purpose: a missing, forged or expired ticket is 401 whatever it holds, never a
          // 422 about its shape
          // (the reference documents it as the string a client sends: referenceSchema)
          t: Type.Optional(
            Type.Unknown({
              description:
                'The media ticket, exactly as GET /api/v1/media-ticket returned it (URL-encoded); missing, forged, expired or of a revoked key: 401',
            }),
          ),
        }),
        params: Type.Object({
          // unchecked here on purpose: any path outside the production's media or with no file is
          // the one 404, never a 422 about its shape
          '*': Type.Unknown({
            description:
              'The rest of a `media_path` after `/media/` (e.g. `86/86b006ee-….jpg`), exactly as the API returned it',
          }),
        }),
        produces: FILE_MEDIA_TYPES,
        response: {
          200: Type.String({ format: 'binary', description: 'The file, typed by its Content-Type' }),
          206: Type.String({ format: 'binary', description: 'The requested byte range' }),
          304: Type.Null({ description: 'Not modified: If-None-Match matched the ETag; no body' }),
          ...errorResponses(401, 404, 416),
        },
      },
    },
    async (request, reply) => {
      const ticket = (request.query as Record<string, unknown> | undefined)?.t;
      const media = await resolveTicketedMedia(app.ctx, request.raw.url ?? request.url, ticket);
      return sendMedia(request, reply, app.ctx.store, media, mediaFileNotFound);
    },
  );
}
