import type { FastifyInstance } from 'fastify';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { KEPT_ANSWER } from '../../http/reference-headers.js';
import { ConditionalHeaders, KEPT_NOTE, NotModified } from '../../http/schemas.js';
import { Production } from './schemas.js';
import { getProduction } from './service.js';

export async function productionRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/production',
    {
      config: { auth: { scopes: ['read'], surface: 'production' }, responseHeaders: KEPT_ANSWER },
      schema: {
        operationId: 'getProduction',
        summary: "The key's production, with counts computed from the graph",
        description: KEPT_NOTE,
        tags: ['production'],
        headers: ConditionalHeaders,
        response: { 200: Production, 304: NotModified },
      },
    },
    // the counts walk the whole graph: kept until the production changes (answer-cache.ts)
    async (request, reply) => {
      const principal = principalOf(request);
      return sendAnswer(app.answers, request, reply, AnswerCache.key('production', principal), async () => ({
        payload: await getProduction(app.ctx, principal),
      }));
    },
  );
}
