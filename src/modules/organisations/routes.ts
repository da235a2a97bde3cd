import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { Organisation } from '../admin-lookup/schemas.js';
import { NewOrganisation } from './schemas.js';
import { addOrganisation } from './service.js';
import { actorOfPrincipal } from '../admin/service.js';
import { routesOf } from '../../http/define-route.js';

const write = { auth: { scopes: ['admin'], surface: 'production' }, idempotent: true } as const;

export async function organisationRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).post(
    '/admin/organisations',
    {
      config: write,
      schema: {
        operationId: 'createOrganisation',
        summary: 'Add a vendor organisation, to engage it',
        description:
          'Answers the organisation as `GET /admin/organisations` lists it (with no engagement yet); its `id` goes into `POST /admin/engagements` as `organisation_id`. The name is stored trimmed; without `ref` one is made from the name. 409 when the production already has an organisation of that name (compared case-insensitively after trimming) or anything under that ref (refs are unique across the whole production document); 422 for a blank name or a malformed ref. Recorded in the activity feed and the change feed (kind `organisation`). A production document re-imported later keeps it while an engagement made here belongs to it; list it in the document to keep it for good.',
        tags: ['admin'],
        body: NewOrganisation,
        response: { 201: Organisation, ...errorResponses(400, 409, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<Organisation>(request, reply, { status: 201 }, (hooks) =>
        addOrganisation(app.ctx.db, p.productionId, actorOfPrincipal(p), request.body, hooks),
      );
    },
  );
}
