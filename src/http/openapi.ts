import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from './schemas.js';

export const API_PREFIX = '/api/v1';

const DESCRIPTION = `
The Production Graph Service: one production's graph (scenes, assets, versions, schedule,
approvals, deliveries, people, money, activity) for pipeline scripts, dashboards, delivery
trackers and vendor automation.

**Keys.** Every call carries \`Authorization: Bearer <key>\`. A key belongs to one production.
Production-wide keys reach every endpoint their scopes allow; engagement-bound (vendor) keys
reach only the round-trip endpoints (bundles, turnovers, media, purchase orders), clamped to
their engagement's grants.

**Errors.** Every non-2xx answer is \`{"detail": "..."}\`: 401 no/bad/revoked key, 403 scope or
surface, 404 unknown or out-of-reach object (the two are indistinguishable), 422 validation
(naming the field), 400 malformed JSON, 413 too large.

**Compatibility.** Changes inside v1 are additive; clients must tolerate unknown fields.
`;

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'prodgraph — Production Graph Service',
        version: '1.0.0',
        description: DESCRIPTION.trim(),
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key minted with `prodgraph keys mint`',
          },
        },
      },
    },
    // the docs page and the document itself are not part of the API
    hideUntagged: false,
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true }, config: { auth: 'public' } }, async () =>
    app.swagger(),
  );
}
