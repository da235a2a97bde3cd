import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { sendPage } from '../../http/paging.js';
import { errorResponses } from '../../http/schemas.js';
import { Delivery, DeliveryListQuery } from './schemas.js';
import { listDeliveries } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function deliveryRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/deliveries',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listDeliveries',
        summary: 'Every delivery, inter-department and external, each with its gating approval or null',
        tags: ['deliveries'],
        querystring: DeliveryListQuery,
        response: { 200: Type.Array(Delivery), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await listDeliveries(app.ctx, principalOf(request), request.query)),
  );
}
