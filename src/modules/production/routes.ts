import type { FastifyInstance } from 'fastify';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { CACHED_ANSWER } from '../../http/reference-headers.js';
import { ConditionalHeaders, KEPT_NOTE, NotModified } from '../../http/schemas.js';
import { Production } from './schemas.js';
import { getProduction } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function productionRoutes(app: FastifyInstance): Promise<void> {
  routesOf(app).get(
    '/production',
    {
      config: { auth: { scopes: ['read'], surface: 'production' }, responseHeaders: CACHED_ANSWER },
      schema: {
        operationId: 'getProduction',
        summary: "The key's production, with counts computed from the graph",
        description: KEPT_NOTE,
        tags: ['production'],
        headers: ConditionalHeaders,
        response: { 200: Production, 304: NotModified },
      },
    },
    // the counts walk the whole graph: cached until the production changes (AnswerCache)
    async (request, reply) => {
      const principal = principalOf(request);
      return sendAnswer(app.answers, request, reply, AnswerCache.key('production', principal), async () => ({
        payload: await getProduction(app.ctx, principal),
      }));
    },
  );
}
