import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
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
    async (request) => listScenes(app.ctx, principalOf(request)),
  );
}
