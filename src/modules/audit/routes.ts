import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { sendPage } from '../../http/paging.js';
import { errorResponses } from '../../http/schemas.js';
import { AuditEvent, AuditQuery } from './schemas.js';
import { listAudit } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function auditRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/admin/audit',
    {
      config: { auth: { scopes: ['admin'], surface: 'production' } },
      schema: {
        operationId: 'listAudit',
        summary: "The production's audit trail, newest first",
        description:
          "Every admin action (organisations, engagements, grants, keys, webhooks, delivery status, package files, reviews) and every media or package download by an engagement-bound key: who (person, or key prefix and label; engagement), what (action, object), when (the database clock), from which address, and the outcome. Each row was written in the transaction of the change it records, so a change that rolled back left none. Rows older than the retention (`PRODGRAPH_AUDIT_RETENTION_DAYS`, default 400) are pruned. Filters combine; pages are keyset pages (`limit`, and the Link header's `cursor`).",
        tags: ['admin'],
        querystring: AuditQuery,
        response: { 200: Type.Array(AuditEvent), ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await listAudit(app.ctx.db, principalOf(request).productionId, request.query)),
  );
}
