import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { sendPage } from '../../http/paging.js';
import { errorResponses } from '../../http/schemas.js';
import { Scene, SceneListQuery } from './schemas.js';
import { listScenes } from './service.js';

export async function sceneRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/scenes',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        summary: 'Every scene of the production, in script order (omitted scenes included)',
        tags: ['scenes'],
        querystring: SceneListQuery,
        response: { 200: Type.Array(Scene), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await listScenes(app.ctx, principalOf(request), request.query)),
  );
}
