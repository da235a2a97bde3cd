// No service: the probe has no rule beyond whether the database answers (databaseAnswers).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../../errors.js';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../../http/error-handler.js';
import { errorResponses } from '../../http/schemas.js';
import { databaseAnswers } from './repository.js';
import { routesOf } from '../../http/define-route.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  routesOf(app).get(
    '/healthz',
    {
      // a load balancer's probes must never be refused for their rate
      config: { auth: 'public', rateLimit: false },
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness and database readiness',
        description:
          'Answers 200 while this server serves and its database answers. 503 (`unavailable`, with `Retry-After`) when the database does not answer, and from the moment the server is asked to stop (SIGTERM) while it drains: it still serves what it is sent for a while, so a load balancer checking this route sends requests elsewhere and none is lost.',
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
      if (app.draining) throw errors.unavailable('this server is stopping; send requests to another', 5);
      try {
        await databaseAnswers(app.ctx.db);
      } catch {
        throw errors.unavailable('database is not answering', OUTAGE_RETRY_AFTER_SECONDS);
      }
      return { status: 'ok' as const };
    },
  );
}
