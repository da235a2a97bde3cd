import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { activityFeed } from './service.js';
import { ActivityEntry, FeedQuery } from './schemas.js';
import { sendPage } from '../../http/paging.js';
import { routesOf } from '../../http/define-route.js';

export async function activityRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/activity',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listActivity',
        summary: "The production's activity feed, newest first",
        tags: ['activity'],
        querystring: FeedQuery('entries', 'written'),
        response: { 200: Type.Array(ActivityEntry), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await activityFeed(app.ctx, principalOf(request), request.query)),
  );
}
