import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../http/auth.js';
import { Scene } from './schemas.js';
import { listScenes } from './service.js';

export async function sceneRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/scenes',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        summary: 'Every scene of the production, in script order (omitted scenes included)',
        tags: ['scenes'],
        response: { 200: Type.Array(Scene) },
      },
    },
    // megabytes at the size of a season: kept until the production changes (answer-cache.ts)
    async (request, reply) => {
      const principal = principalOf(request);
      return sendAnswer(app.answers, request, reply, AnswerCache.key('scenes', principal), async () => ({
        payload: await listScenes(app.ctx, principal),
      }));
    },
  );
}
