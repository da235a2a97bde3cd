import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { Delivery } from './schemas.js';
import { listDeliveries } from './service.js';

export async function deliveryRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/deliveries',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        summary: 'Every delivery, inter-department and external, each with its gating approval or null',
        tags: ['deliveries'],
        response: { 200: Type.Array(Delivery) },
      },
    },
    async (request) => listDeliveries(app.ctx, principalOf(request)),
  );
}
