import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { Person } from './schemas.js';
import { crewDirectory } from './service.js';
import { routesOf } from '../../http/define-route.js';

export async function peopleRoutes(app: FastifyInstance): Promise<void> {
  routesOf(app).get(
    '/people',
    {
      config: { auth: { scopes: ['read'], surface: 'production' } },
      schema: {
        operationId: 'listPeople',
        summary: 'The crew directory, in the order the production lists it; no contact details',
        tags: ['people'],
        response: { 200: Type.Array(Person) },
      },
    },
    async (request) => crewDirectory(app.ctx, principalOf(request)),
  );
}
