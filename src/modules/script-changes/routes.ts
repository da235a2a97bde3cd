import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { ScriptChange, ScriptChangeQuery } from './schemas.js';
import { listScriptChanges } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function scriptChangeRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/script-changes',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listScriptChanges',
        summary: 'Detected script-draft differences, newest first',
        description:
          'Status defaults to `pending`. On an episodic production the default scope is the current episode; ' +
          '`episode_id` picks one episode and `all_episodes=true` widens to all. Single productions ignore both.',
        tags: ['script-changes'],
        querystring: ScriptChangeQuery,
        response: { 200: Type.Array(ScriptChange), ...errorResponses(422) },
      },
    },
    async (request) => listScriptChanges(app.ctx, principalOf(request), request.query),
  );
}
