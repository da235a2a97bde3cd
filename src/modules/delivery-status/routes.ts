import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { TRANSITIONS_TEXT } from '../../domain/delivery-status.js';
import { respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { Delivery } from '../deliveries/schemas.js';
import { setDeliveryStatus } from './service.js';
import { DeliveryParams, StatusBody } from './schemas.js';
import { routesOf } from '../../http/define-route.js';

const write = { auth: { scopes: ['admin'], surface: 'production' }, idempotent: true } as const;

export async function deliveryStatusRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).post(
    '/admin/deliveries/:id/status',
    {
      config: write,
      schema: {
        operationId: 'setDeliveryStatus',
        summary: "Move a delivery's status: ready, send, recall, block, accept",
        description: [
          `Allowed moves: ${TRANSITIONS_TEXT}.`,
          'So: draft → ready → sent → accepted; sent → ready recalls a turnover; draft, ready and sent may be',
          'blocked, and a blocked delivery returns to any of the three; accepted is final. Each move to `sent`',
          'stamps `sent_at` (a recall keeps the last one). A vendor sees the package while the delivery is `sent`',
          'or `accepted`. Setting the status the delivery already has answers it unchanged and records nothing.',
          'Any other move is 409 with code `invalid_transition`, whose detail names the statuses the delivery',
          'may move to; 409 `conflict` when another request moved it meanwhile; 404 for an unknown or retired',
          'delivery. `note` is recorded with the move in the activity feed. Answers the delivery as',
          '`GET /deliveries` shows it. Recorded in the change feed (the `delivery` updated).',
        ].join(' '),
        tags: ['admin'],
        params: DeliveryParams,
        body: StatusBody,
        response: { 200: Delivery, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      respondToWrite<Delivery>(request, reply, { status: 200 }, (hooks) =>
        setDeliveryStatus(app.ctx, principalOf(request), request.params.id, request.body, hooks),
      ),
  );
}
