import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { routesOf } from '../../http/define-route.js';
import { installOptionalJsonParser } from '../../http/json-body.js';
import { errorResponses } from '../../http/schemas.js';
import { LookBrief, LookParams } from './schemas.js';
import { lookBrief } from './service.js';

const read = { scopes: ['read'], surface: 'production' } as const;

export async function lookBriefRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // it takes no body, and `Content-Type: application/json` with nothing after it is none
  installOptionalJsonParser(app);

  routesOf(app).post(
    '/vision/looks/:version_id/brief',
    {
      config: { auth: read },
      schema: {
        operationId: 'createLookBrief',
        summary: 'Look brief of a released still',
        description:
          "A structured look brief distilled from the pixels of a released version's still: size, a " +
          'palette of up to 8 named colours with their shares, exposure (mean luma, key, contrast, clipped ' +
          'and crushed fractions), colour (saturation, warmth, dominant hue) and a one-sentence summary. ' +
          'Deterministic and computed here (no provider, no network); stored per version and source ' +
          "file, and served from the store until the version's media changes. No request body. An " +
          "unknown version, another production's, or one not released: 404, alike. A released version " +
          'without media, or whose media is not a still image (video, animated, undecodable) or would take ' +
          'more memory to decode than one decode may (PRODGRAPH_MAX_DECODE_MB: a large progressive JPEG, ' +
          'WebP or AVIF, which cannot be shrunk while decoding): 422 naming why. Two decodes run at once per ' +
          'process; up to 16 requests wait their turn, more are refused with 503 and `Retry-After`.',
        tags: ['vision'],
        params: LookParams,
        response: { 200: LookBrief, ...errorResponses(404, 422) },
      },
    },
    async (request) => lookBrief(app.ctx, principalOf(request), request.params.version_id),
  );
}
