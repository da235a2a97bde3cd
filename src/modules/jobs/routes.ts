import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { FeedQuery } from '../activity/schemas.js';
import { sendPage } from '../../http/paging.js';
import { GenerationJob } from './schemas.js';
import { recentJobs } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function jobRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/jobs',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listJobs',
        summary: 'Recent image and video generation jobs, newest first',
        tags: ['jobs'],
        querystring: FeedQuery('jobs', 'changed'),
        response: { 200: Type.Array(GenerationJob), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await recentJobs(app.ctx, principalOf(request), request.query)),
  );
}
