import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { ingestEvents } from './service.js';
import { StorageEventsBody, StorageEventsResult } from './schemas.js';
import { routesOf } from '../../http/define-route.js';

/** Room per event in the request body: two 4,096-character paths would still fit in 10 KiB. */
const BYTES_PER_EVENT = 2048;

export async function storageEventRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).post(
    '/storage/events',
    {
      config: { auth: { scopes: ['write'], surface: 'production' }, idempotent: true },
      bodyLimit: app.ctx.config.limits.eventBatch * BYTES_PER_EVENT + 64 * 1024,
      schema: {
        operationId: 'postStorageEvents',
        summary: "The storage agent's filespace events: record them once, keep the library in step",
        description: [
          'Each event is validated on its own; bad ones are listed in `refused` ({index, dedupe_key, reason}) and the rest are applied, in order, in one transaction.',
          'A `dedupe_key` already recorded for this production counts under `duplicates` and never creates a second row, even when two agents replay the same batch at once.',
          'Accepted events keep the library (one row per live path) in step: `create`/`modify` upsert the row at `path`, `delete` retires it, `move` renames it to `to_path` (replacing a live row already there; a move from an unknown path records the file at `to_path`).',
          'New files are summarised in the activity feed, one entry per top-level folder per batch.',
          '403 when `filespace` is not the production’s active install; 413 when the batch holds more events than the limit (10,000 by default) or the body is larger than 2 KiB per allowed event.',
        ].join('\n\n'),
        tags: ['storage'],
        body: StorageEventsBody,
        response: { 200: StorageEventsResult, ...errorResponses(400, 413, 422) },
      },
    },
    async (request, reply) =>
      respondToWrite(request, reply, { status: 200 }, (hooks) =>
        ingestEvents(app.ctx, principalOf(request), request.body, hooks),
      ),
  );
}
