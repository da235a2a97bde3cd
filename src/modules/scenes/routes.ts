import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AnswerCache, sendAnswer } from '../../http/answer-cache.js';
import { principalOf } from '../../auth/route-hook.js';
import { isPaged, sendPage } from '../../http/paging.js';
import { ConditionalHeaders, errorResponses, KEPT_NOTE, NotModified } from '../../http/schemas.js';
import { CACHED_ANSWER } from '../../http/reference-headers.js';
import { Scene, SceneListQuery } from './schemas.js';
import { listScenes } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function sceneRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/scenes',
    {
      config: { auth: { scopes: ['read'], surface: 'production' }, responseHeaders: CACHED_ANSWER },
      schema: {
        operationId: 'listScenes',
        summary: 'Every scene of the production, in script order (omitted scenes included)',
        description: `Without \`limit\` (the whole list): ${KEPT_NOTE}`,
        tags: ['scenes'],
        querystring: SceneListQuery,
        headers: ConditionalHeaders,
        response: { 200: Type.Array(Scene), 304: NotModified, ...errorResponses(422) },
      },
    },
    // megabytes at the size of a season: the plain list is cached until the production changes
    async (request, reply) => {
      const principal = principalOf(request);
      const query = request.query;
      if (isPaged(query)) return sendPage(request, reply, await listScenes(app.ctx, principal, query));
      return sendAnswer(app.answers, request, reply, AnswerCache.key('scenes', principal), async () => ({
        payload: (await listScenes(app.ctx, principal)).items,
      }));
    },
  );
}
