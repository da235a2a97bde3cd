import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../http/auth.js';
import { Production } from './schemas.js';
import { getProduction } from './service.js';

export async function productionRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/production',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        summary: "The key's production, with counts computed from the graph",
        tags: ['production'],
        response: { 200: Production },
      },
    },
    async (request) => getProduction(app.ctx, principalOf(request)),
  );
}
