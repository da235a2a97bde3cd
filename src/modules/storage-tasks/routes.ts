import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { StorageTask, TaskAckBody, TaskAckResult } from './schemas.js';
import { acknowledgeTask, listPendingTasks } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function storageTaskRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/storage/tasks',
    {
      config: { auth: { scopes: ['read', 'write'], surface: 'production' } },
      schema: {
        operationId: 'listStorageTasks',
        summary: 'Admin-approved file moves waiting for the storage agent, oldest first',
        description:
          'Every task not yet acknowledged (`status` is `pending`), oldest approval first. Tasks are queued by an admin with `prodgraph storage task`; the agent makes the move on the filespace and reports it with POST /storage/tasks/ack.',
        tags: ['storage'],
        response: { 200: Type.Array(StorageTask) },
      },
    },
    async (request) => listPendingTasks(app.ctx, principalOf(request)),
  );
  routesOf(app).post(
    '/storage/tasks/ack',
    {
      config: { auth: { scopes: ['write'], surface: 'production' }, idempotent: true },
      schema: {
        operationId: 'ackStorageTask',
        summary: 'Report a move task done or failed',
        description: [
          '`ok: true` settles the task as `done` and renames the library row from `from_path` to `to_path` in the same transaction (replacing a live row already at `to_path`); `ok: false` settles it as `failed`. The note is kept with the task. Both append an activity entry.',
          'Re-acknowledging a settled task answers 200 with `ok: true`, `already_settled: true` and the task as first settled; nothing changes. An unknown task, or one of another production, answers 404.',
        ].join('\n\n'),
        tags: ['storage'],
        body: TaskAckBody,
        response: { 200: TaskAckResult, ...errorResponses(400, 404, 422) },
      },
    },
    async (request, reply) =>
      respondToWrite(request, reply, { status: 200 }, (hooks) =>
        acknowledgeTask(app.ctx, principalOf(request), request.body, hooks),
      ),
  );
}
