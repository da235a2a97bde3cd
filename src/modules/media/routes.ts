import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { mediaAnswerHeaders, MediaRequestHeaders, sendMedia } from '../../http/media-response.js';
import { MEDIA_BYTES } from '../../http/reference-headers.js';
import { errorResponses, FILE_MEDIA_TYPES } from '../../http/schemas.js';
import { MediaDetail, MediaParams } from './schemas.js';
import { downloadMedia, getMedia, mediaNotFound } from './service.js';
import { routesOf } from '../../http/define-route.js';

const read = { auth: { scopes: ['read'], surface: 'round-trip' } } as const;

const VISIBILITY =
  "A production-wide key sees every media object of its production (a file taken out of a delivery's package included). An engagement-bound key sees what its engagement uploaded; the media of released versions (and their ingredients) of assets its live scene and character grants reach; and the files of a delivery's package (the `package` of its turnover row) while it holds a live read or submit grant on that delivery and the delivery is `sent` or `accepted`, as long as the file is not taken out of the package. Work another engagement submitted on a turnover is never visible, whatever delivery grants say. Anything else (a draft package, a removed file, another vendor's package) answers 404, exactly as for an unknown id: the same status, body and headers, after the same database statements.";

export async function mediaRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).get(
    '/media/:id',
    {
      config: read,
      schema: {
        operationId: 'getMedia',
        summary: 'Metadata of one media object',
        description: VISIBILITY,
        tags: ['round-trip'],
        params: MediaParams,
        response: { 200: MediaDetail, ...errorResponses(404, 422) },
      },
    },
    async (request) => getMedia(app.ctx, principalOf(request), request.params.id),
  );

  routesOf(app).get(
    '/media/:id/content',
    {
      onSend: mediaAnswerHeaders,
      // stored bytes go out as stored: exact Content-Length and byte ranges (see `compression`)
      compress: false,
      config: { ...read, responseHeaders: MEDIA_BYTES },
      schema: {
        operationId: 'getMediaContent',
        summary: 'The bytes of one media object, streamed',
        description: `${VISIBILITY}\n\nContent-Type is the type sniffed from the bytes at upload; Content-Length, Last-Modified and a strong ETag (the SHA-256) are sent. A single \`Range: bytes=a-b\` answers 206 (416 when unsatisfiable); If-None-Match on the ETag answers 304.`,
        tags: ['round-trip'],
        params: MediaParams,
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
      const media = await downloadMedia(app.ctx, principalOf(request), request.params.id);
      return sendMedia(request, reply, app.ctx.store, media, mediaNotFound, media.beforeAnswer);
    },
  );
}
