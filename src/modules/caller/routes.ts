import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { CallerKey } from './schemas.js';
import { callerKey } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function callerRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/key',
    {
      // any valid key may ask who it is: a vendor key too, with no scope needed
      config: { auth: { scopes: [], surface: 'round-trip' } },
      schema: {
        operationId: 'getCurrentKey',
        summary: 'The key this request was made with: its scopes, production and engagement',
        description:
          'Never the token. A tool (the console, a script) asks this once to learn what the key may do and whether it is a vendor key.',
        tags: ['service'],
        response: { 200: CallerKey },
      },
    },
    async (request) => callerKey(app.ctx.db, principalOf(request)),
  );
}
