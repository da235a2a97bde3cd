import type { FastifyInstance } from 'fastify';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { Production } from './schemas.js';
import { getProduction } from './service.js';

export async function productionRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/production',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'getProduction',
        summary: "The key's production, with counts computed from the graph",
        tags: ['production'],
        response: { 200: Production },
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
