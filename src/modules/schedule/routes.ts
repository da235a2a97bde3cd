import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { ScheduleQuery, ShootDay } from './schemas.js';
import { listSchedule } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function scheduleRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/schedule',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listShootDays',
        summary: 'The shooting schedule: every shoot day with its scene strips, by day number',
        tags: ['schedule'],
        querystring: ScheduleQuery,
        response: { 200: Type.Array(ShootDay), ...errorResponses(422) },
      },
    },
    async (request) => listSchedule(app.ctx, principalOf(request), request.query.episode_id ?? []),
  );
}
