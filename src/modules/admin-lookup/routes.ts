import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { GrantTarget, GrantTargetQuery, Organisation } from './schemas.js';
import { listOrganisations, searchGrantTargets } from './service.js';
import { routesOf } from '../../http/define-route.js';

const read = { auth: { scopes: ['admin'], surface: 'production' } } as const;

export async function adminLookupRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  routesOf(app).get(
    '/admin/organisations',
    {
      config: read,
      schema: {
        operationId: 'listOrganisations',
        summary: "The production's organisations, to engage one as a vendor",
        description: 'From the production document; each with how many live engagements it has.',
        tags: ['admin'],
        response: { 200: Type.Array(Organisation) },
      },
    },
    async (request) => listOrganisations(app.ctx.db, principalOf(request).productionId),
  );

  routesOf(app).get(
    '/admin/grant-targets',
    {
      config: read,
      schema: {
        operationId: 'searchGrantTargets',
        summary: 'Find what a grant can name: a scene by number or slugline, a character, a delivery',
        description:
          'Live scenes, characters or external deliveries (an internal one cannot be granted to a vendor) matching `q`, in the production’s order (script order for scenes), at most `limit`. The `id` goes into `POST /admin/grants` as `node_id` (scene, character) or `delivery_id`.',
        tags: ['admin'],
        querystring: GrantTargetQuery,
        response: { 200: Type.Array(GrantTarget), ...errorResponses(422) },
      },
    },
    async (request) => searchGrantTargets(app.ctx.db, principalOf(request).productionId, request.query),
  );
}
