import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { referenceRoute } from './reference.js';
import { bodiesAsRequired, everyOperationRefuses, nameSchemas } from './reference-document.js';
import { documentHeaders } from './reference-headers.js';
import { TAGS } from './reference-tags.js';
import { ErrorBody } from './schemas.js';
import { PACKAGE_VERSION } from '../version.js';
import { routesOf } from './define-route.js';
import { Type } from 'typebox';

/** The reference's own routes: not part of the API, and they take any query string (a browser's cache-buster). */
const REFERENCE_ROUTE = {
  schema: { hide: true, querystring: Type.Object({}, { additionalProperties: true }) },
  config: { auth: 'public' as const },
};

export const API_PREFIX = '/api/v1';

const DESCRIPTION = `
The Production Graph Service: one production's graph (scenes, assets, versions, schedule,
approvals, deliveries, people, money, activity) for pipeline scripts, dashboards, delivery
trackers and vendor automation.

**Keys.** Every call carries \`Authorization: Bearer <key>\`. A key belongs to one production.
Production-wide keys reach every endpoint their scopes allow; engagement-bound (vendor) keys
reach only the round-trip endpoints (bundles, turnovers, media, purchase orders), clamped to
their engagement's grants; \`GET /api/v1/bundles\` lists the scene and character bundles a key
may fetch.

**Errors.** Every non-2xx answer is \`{"detail": "...", "code": "..."}\`: 401 no/bad/revoked key,
403 scope or surface, 404 unknown or out-of-reach object (the two are indistinguishable), 422
validation (the detail starts with the field, and \`field\` names it too), 400 malformed JSON,
multipart or URL, 413 too large, 415 a Content-Type or file type the endpoint does not take.
\`detail\` is for people; \`code\` is a stable, machine-readable value to branch on (the ErrorBody
schema lists them); on a 422, \`field\` is the field, parameter or header at fault.

**Input is taken as sent.** JSON fields are never coerced (\`"label": 42\` is 422, not the label
"42") and unknown fields are refused. Path and query parameters are converted strictly: a whole
number is plain decimal digits (\`1.5\`, \`1e3\`, \`0x1A\`, \`+1\`, \`01\` are not), an id is at most
2147483647, an unknown query parameter is 422 naming it, and a parameter that takes one value
given twice is 422. Text: free-text fields (every JSON and form field) take any Unicode with TAB,
LF and CR as the only control characters; path and query parameters and headers take no control
character; NUL, the other C0 and C1 controls, DEL and unpaired UTF-16 surrogates are 422 naming
the field. A body whose schema requires a field must be sent (422 otherwise).

**Retries.** Every write POST (scope \`write\`, \`submit:turnover\` or \`admin\`) accepts an
\`Idempotency-Key\` header: a repeat with the same key and body within 24 hours answers the
original status and body (\`Idempotent-Replayed: true\`) and writes nothing again.

**Rate limits** (beyond the contract; \`PRODGRAPH_RATE_LIMIT\`, default 1200 requests a minute,
\`off\` to disable). Counted per key once it is authenticated (per client address on routes
without a key; health checks never), shared by every server process on PostgreSQL (each
process takes counts in blocks of at most 1/64 of what is left of the window, so with several
processes a key may be refused slightly before its limit; under 64 it is exact). Every
counted answer carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`
(seconds); beyond the limit 429 \`{detail, code: "rate_limited"}\` with \`Retry-After\` (seconds).

**Headers.** Every answer carries \`X-Content-Type-Options: nosniff\`; answers that carry a
token or ticket \`Cache-Control: no-store\`; media answers \`Content-Disposition\` (inline, a
sanitised file name) and \`Referrer-Policy: no-referrer\`. No CORS headers unless the operator
lists origins in \`PRODGRAPH_CORS_ORIGINS\`.

**Lists that page.** \`/assets\`, \`/scenes\`, \`/approvals\`, \`/deliveries\`, \`/turnovers\`,
\`/bundles\`, \`/activity\` and \`/jobs\` take \`limit\` (rows per page) and answer a plain array; when more
rows follow, \`Link: <…>; rel="next"\` names the next page (an opaque \`cursor\`, valid only with
the same list, production and filters; anything else is 422). Without \`limit\` the whole list is
answered (\`/activity\` and \`/jobs\`: 50 by default, at most 200). Pages follow the sort key and
id, so writes during a walk never skip or repeat a row.

**Staying in sync.** Rows that can change carry \`updated_at\`; the lists that page (all but
\`/bundles\`, whose bundles each keep their own ETag) take \`updated_since\` (ISO-8601 with a
zone) and answer only rows changed after it, including rows retired since, which then carry
\`retired_at\` (drop them from a mirror).

**Media by id.** Every \`media_path\` comes with its \`media_id\`: \`GET /api/v1/media/{id}\` and
\`/content\` serve it to the same key, a vendor key included (exactly the media its bundles show,
plus its own submissions).

**Freshness.** Reads are never stale: every committed write, import, sync and grant change
bumps the production's revision, read with the key on every request. The bundles, production,
scene, asset, turnover and purchase-order answers are kept per revision and per view
(production-wide, or one engagement) and sent again until anything changes; what a key may
reach is judged on every request first, so a revoked key or grant, or an expired grant, is
refused on the very next request. This holds across several server processes on one database.

**Compression and revalidation.** Any JSON answer of 1 kB or more is sent gzip- or
brotli-encoded (\`Content-Encoding\`) when \`Accept-Encoding\` asks for it; without that header,
or for a smaller answer, the JSON goes out as it is. Media bytes are never encoded (their
\`Content-Length\` and byte ranges are the stored file's). A cached answer (the lists of scenes,
assets and turnovers without \`limit\`, one asset, the production, the bundles, purchase orders)
carries \`Vary: Accept-Encoding\` and an \`ETag\`, the same for every encoding (it names the JSON
document); send it back in \`If-None-Match\` to get 304 with no body while the answer is unchanged.

**Compatibility.** Changes inside v1 are additive; clients must tolerate unknown fields.
`;

async function openApiPlugin(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorBody);
  /** The last pass, once every route is in the document: named schemas, then every header. */
  const finish = <T>(document: T): T => {
    const routes = new Map(app.routeTable.map((r) => [r.operationId, r]));
    bodiesAsRequired(document as Record<string, unknown>);
    const doc = nameSchemas(document) as Record<string, unknown>;
    everyOperationRefuses(doc);
    documentHeaders(doc, (id) => routes.get(id));
    return document;
  };
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'prodgraph — Production Graph Service',
        version: PACKAGE_VERSION,
        description: DESCRIPTION.trim(),
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/' }],
      tags: [...TAGS],
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
    transform: ({ schema, url, route }) => {
      const shown = referenceRoute(schema as Record<string, unknown>, url, route.config?.auth === 'public');
      return { schema: shown.schema as typeof schema, url: shown.url };
    },
    transformObject: (document) => ('openapiObject' in document ? finish(document.openapiObject) : {}),
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  // The base URL is where people land first: a browser is sent to the reference; a script gets
  // where everything is (and `/media/..` resolves here too, so nothing else may answer 3xx).
  routesOf(app).get('/', REFERENCE_ROUTE, async (request, reply) => {
    if (/\btext\/html\b/.test(request.headers.accept ?? '')) return reply.redirect('/docs', 302);
    return reply
      .header('link', '</docs>; rel="service-doc", </api/v1/openapi.json>; rel="service-desc"')
      .send({
        docs: '/docs',
        openapi: `${API_PREFIX}/openapi.json`,
        api: API_PREFIX,
        mcp: '/mcp',
        health: '/healthz',
        console: '/console',
      });
  });
  routesOf(app).get(`${API_PREFIX}/openapi.json`, REFERENCE_ROUTE, async () => app.swagger());
}

/** The reference: the document at /api/v1/openapi.json and its page at /docs. */
export const openApi = fp(openApiPlugin, {
  name: 'prodgraph-openapi',
  // the document's last pass reads the route table, which lists the reference's own routes too
  dependencies: ['prodgraph-route-table'],
});
