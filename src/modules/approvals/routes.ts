import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { sendPage } from '../../http/paging.js';
import { errorResponses } from '../../http/schemas.js';
import { ApprovalChain, ApprovalListQuery } from './schemas.js';
import { listApprovals } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function approvalRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/approvals',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listApprovals',
        summary: 'Approval chains with their steps, current step and subject, oldest first',
        tags: ['approvals'],
        querystring: ApprovalListQuery,
        response: { 200: Type.Array(ApprovalChain), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await listApprovals(app.ctx, principalOf(request), request.query)),
  );
}
