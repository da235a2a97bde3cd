import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { ChangePage, ChangesQuery } from './schemas.js';
import { readChanges } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function changeRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/changes',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listChanges',
        summary: 'The change feed: every change to the production, in commit order',
        description:
          'Every object a write created, updated or retired — from the API, the storage agent, the CLI or a re-import of the production document — one entry per object and write, oldest first. ' +
          'Read on with `after=<next_cursor>`; a cursor stays valid for good (across restarts) and, on PostgreSQL with several servers, the feed never skips a change that commits later. ' +
          'With `wait=SECONDS` an empty answer is held until a change commits (long-polling), so a client learns of a change within about a second without polling hard. ' +
          'To keep a copy: take `after=now`, then read the lists, then follow the feed from that cursor and re-read each object it names (`retired`: drop it).',
        tags: ['changes'],
        querystring: ChangesQuery,
        response: { 200: ChangePage, ...errorResponses(422) },
      },
    },
    async (request, reply) => {
      // a client that hangs up ends its long-poll at once
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      return readChanges(app.ctx, principalOf(request), request.query, gone.signal);
    },
  );
}
