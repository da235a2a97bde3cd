import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { errors } from '../../errors.js';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../../http/error-handler.js';
import { errorResponses } from '../../http/schemas.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/healthz',
    {
      // a load balancer's probes must never be refused for their rate
      config: { auth: 'public', rateLimit: false },
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness and database readiness',
        tags: ['service'],
        response: {
          200: Type.Object(
            { status: Type.Literal('ok') },
            { description: 'The service and its database answer' },
          ),
          ...errorResponses(503),
        },
      },
    },
    async () => {
      try {
        await sql`select 1`.execute(app.ctx.db);
      } catch {
        throw errors.unavailable('database is not answering', OUTAGE_RETRY_AFTER_SECONDS);
      }
      return { status: 'ok' as const };
    },
  );
}
