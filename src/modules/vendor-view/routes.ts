import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { mediaAnswerHeaders, MediaRequestHeaders, sendMedia } from '../../http/media-response.js';
import { MEDIA_BYTES } from '../../http/reference-headers.js';
import { errorResponses, FILE_MEDIA_TYPES } from '../../http/schemas.js';
import { CharacterBundle, SceneBundle } from '../bundles/schemas.js';
import { mediaNotFound } from '../media/service.js';
import { VendorView, ViewBundleParams, ViewMediaParams, ViewParams } from './schemas.js';
import * as view from './service.js';
import { routesOf } from '../../http/define-route.js';

const read = { auth: { scopes: ['admin'], surface: 'production' } } as const;

const SAME =
  'Computed by the very service the vendor’s own request runs, with this engagement as the caller: its live grants are judged now, as on each vendor request, so a grant added or revoked shows here on the next request. No key is minted, nothing is stored. An unknown engagement, or one of another production, is 404.';

const AS_VENDOR =
  'Answers exactly what a key bound to this engagement gets from the round-trip route of the same name: the same body, or the same 404 when the vendor would be refused it (an unknown node alike).';

export async function vendorViewRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).get(
    '/admin/engagements/:id/view',
    {
      config: read,
      schema: {
        operationId: 'getEngagementView',
        summary: 'See as vendor: what this engagement’s keys see right now',
        description: `The bundles the vendor may fetch (as its \`GET /bundles\` lists them), its turnovers (with \`can_submit\`), its purchase orders (as a key holding \`read:money\` gets them; a key without that scope is refused them) and its own submissions. ${SAME}`,
        tags: ['admin'],
        params: ViewParams,
        response: { 200: VendorView, ...errorResponses(404, 422) },
      },
    },
    async (request) => view.engagementView(app.ctx, principalOf(request), request.params.id),
  );

  routesOf(app).get(
    '/admin/engagements/:id/view/bundles/scene/:node_id',
    {
      config: read,
      schema: {
        operationId: 'getEngagementSceneBundle',
        summary: 'See as vendor: one scene bundle as this engagement gets it',
        description: `${AS_VENDOR} ${SAME}`,
        tags: ['admin'],
        params: ViewBundleParams,
        response: { 200: SceneBundle, ...errorResponses(404, 422) },
      },
    },
    async (request) =>
      view.viewSceneBundle(app.ctx, principalOf(request), request.params.id, request.params.node_id),
  );

  routesOf(app).get(
    '/admin/engagements/:id/view/bundles/character/:node_id',
    {
      config: read,
      schema: {
        operationId: 'getEngagementCharacterBundle',
        summary: 'See as vendor: one character bundle as this engagement gets it',
        description: `${AS_VENDOR} ${SAME}`,
        tags: ['admin'],
        params: ViewBundleParams,
        response: { 200: CharacterBundle, ...errorResponses(404, 422) },
      },
    },
    async (request) =>
      view.viewCharacterBundle(app.ctx, principalOf(request), request.params.id, request.params.node_id),
  );

  routesOf(app).get(
    '/admin/engagements/:id/view/media/:media_id/content',
    {
      // the same answer as GET /media/{id}/content: its headers, refusals included
      onSend: mediaAnswerHeaders,
      // stored bytes go out as stored: exact Content-Length and byte ranges (see `compression`)
      compress: false,
      config: { ...read, responseHeaders: MEDIA_BYTES },
      schema: {
        operationId: 'getEngagementMediaContent',
        summary: 'See as vendor: a media object’s bytes, if this engagement may fetch them',
        description: `${AS_VENDOR} Range, ETag and If-None-Match work as on \`GET /media/{id}/content\`. ${SAME}`,
        tags: ['admin'],
        params: ViewMediaParams,
        headers: MediaRequestHeaders,
        produces: FILE_MEDIA_TYPES,
        response: {
          200: Type.String({ format: 'binary', description: "The file's bytes, typed by Content-Type" }),
          206: Type.String({ format: 'binary', description: 'The requested byte range' }),
          304: Type.Null({ description: 'Not modified: If-None-Match matched the ETag; no body' }),
          ...errorResponses(404, 416, 422),
        },
      },
    },
    async (request, reply) => {
      const media = await view.viewMediaContent(
        app.ctx,
        principalOf(request),
        request.params.id,
        request.params.media_id,
      );
      return sendMedia(request, reply, app.ctx.store, media, mediaNotFound);
    },
  );
}
