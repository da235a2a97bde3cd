import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { errors, isAppError } from '../errors.js';
import { jsonParser } from '../http/json-body.js';
import { HTTP_LAYER } from '../http/layer.js';
import { principalOf } from '../auth/route-hook.js';
import { ErrorBody, errorResponses } from '../http/schemas.js';
import { buildCatalogue, type Catalogue } from './catalogue.js';
import { classify, JsonRpcRequest, JsonRpcResponse, UNPARSEABLE } from './envelope.js';
import { PROMPTS } from './prompts.js';
import { RESOURCES } from './resources.js';
import { TOOLS } from './tools.js';
import { RestRoutes } from './rest-routes.js';
import { routesOf } from '../http/define-route.js';

const DESCRIPTION = `
The production graph for AI agents over the Model Context Protocol (Streamable HTTP, stateless):
one JSON-RPC 2.0 request per POST, answered with one JSON body (never an SSE stream, no session;
no \`initialize\` needed first). \`Accept: application/json\` alone is enough.

**Keys.** Checked before the body is read: a missing, unknown or revoked key is HTTP 401. Inside
\`tools/call\`, \`resources/read\` and \`prompts/get\` a surface, scope or grant refusal is the
REST route's HTTP 403 \`{detail}\`, not a JSON-RPC error. Engagement-bound keys reach this
endpoint; tools whose REST route is production-surface answer them 403, as REST does.

**JSON-RPC errors** (in a 200 response): -32700 bad JSON, -32600 a batch or not a JSON-RPC 2.0
request, -32601 unknown method, -32602 unknown tool or prompt or bad params (naming the field),
-32002 unknown resource (with \`data.uri\`). A notification (no \`id\`) is 202 with no body.

**Tools** call the same service as their REST rest, so clamps, refusals and data are identical.
Arguments are the REST route's path and query parameters with the REST route's own schemas, as one closed
object. \`structuredContent\` is the REST route's body (an array travels under one named key, e.g.
\`{"scenes": [...]}\`), repeated as JSON in one text block. A refused argument (REST 422), a
missing or out-of-reach object (REST 404) or a submission over its limits (REST 413) is a tool
result with \`isError: true\` and the REST detail. \`submit_turnover\` takes its files in
base64 with the REST limits per file and per submission; the whole request is bounded by
PRODGRAPH_MAX_MCP_BODY_BYTES (HTTP 413 beyond).`;

/** The catalogue as the OpenAPI document states it, from the same tables the server serves. */
const CATALOGUE = [
  '**Tools** (each with its REST route under /api/v1):',
  ...TOOLS.map((t) => `- \`${t.name}\` (${t.rest}): ${t.title}`),
  '',
  `**Resources** (application/json): ${RESOURCES.map((r) => `\`${r.uri}\``).join(', ')}.`,
  '',
  `**Prompts**: ${PROMPTS.map((p) => `\`${p.name}\` (${p.arguments.map((a) => a.name).join(', ')})`).join(', ')}.`,
].join('\n');

/**
 * The SDK (and the zod schemas it builds) costs about half a second to load: it is loaded when
 * the server starts listening or on the first call, not by every process that builds the app
 * (the CLI, the test suites).
 */
let sdk: Promise<typeof import('./exchange.js')> | undefined;
const loadSdk = () => (sdk ??= import('./exchange.js'));

/**
 * A 400 here is either the MCP transport's JSON-RPC error (an `MCP-Protocol-Version` header it
 * does not support) or the HTTP layer's `{detail, code}` (a body nested deeper than any JSON route
 * reads): both documented, so a client can read either.
 */
const BAD_REQUEST = {
  description:
    'Bad request: a JSON-RPC 2.0 error response (`id` null, `error.code` -32000) for an `MCP-Protocol-Version` header the server does not support, or `{detail, code}` for a body nested too deep to read',
  content: { 'application/json': { schema: Type.Union([JsonRpcResponse, ErrorBody]) } },
};

const NOT_ALLOWED = 'this endpoint takes POST only: one JSON-RPC request per POST, no SSE stream';

async function mcpRoutes(app: FastifyInstance, opts: { catalogue: () => Catalogue }): Promise<void> {
  // JSON only (anything else is 415), and bytes that are not JSON a JSON-RPC -32700, not the REST 400.
  // A body nested too deep is the HTTP 400 every JSON route answers, before anything is parsed.
  const json = jsonParser(app);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    json(request, body as string, (err, value) =>
      isAppError(err) ? done(err) : done(null, err ? UNPARSEABLE : value),
    ),
  );

  routesOf(app).post(
    '/mcp',
    {
      // submit_turnover carries its files in base64: the message is bounded like an upload
      config: {
        auth: { scopes: [], surface: 'round-trip' },
        upload: { maxBytes: app.ctx.config.limits.mcpBodyBytes },
      },
      // the envelope is checked by the JSON-RPC layer, whose refusals are JSON-RPC errors
      validatorCompiler: () => () => true,
      schema: {
        operationId: 'callMcp',
        summary: 'MCP: tools, resources and prompts over the production, for AI agents',
        description: `${DESCRIPTION.trim()}\n\n${CATALOGUE}`,
        tags: ['mcp'],
        headers: Type.Object({
          'mcp-protocol-version': Type.Optional(
            Type.String({ description: 'Sent by MCP clients after initialize; an unsupported one is 400' }),
          ),
        }),
        body: JsonRpcRequest,
        response: {
          200: JsonRpcResponse,
          202: Type.Null({ description: 'A notification was received; no body' }),
          400: BAD_REQUEST,
          ...errorResponses(413, 415),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const envelope = classify(request.body);
      if (envelope.kind === 'refused') return reply.code(200).send(envelope.body);
      if (envelope.kind === 'notification') return reply.code(202).send();
      const header = request.headers['mcp-protocol-version'];
      const { exchange } = await loadSdk();
      const answer = await exchange(
        opts.catalogue(),
        app.ctx,
        principal,
        envelope.message,
        typeof header === 'string' ? header : undefined,
        request.log,
      );
      if ('refusal' in answer) throw answer.refusal;
      return reply
        .code(answer.status as 200)
        .type('application/json; charset=utf-8')
        .send(answer.body);
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    routesOf(app).route({
      method,
      url: '/mcp',
      config: { auth: 'public' },
      schema: {
        operationId: method === 'GET' ? 'openMcpStream' : 'endMcpSession',
        summary: `Not offered: ${method === 'GET' ? 'no SSE stream' : 'no session to end'}`,
        tags: ['mcp'],
        response: errorResponses(405),
      },
      handler: async () => {
        throw errors.methodNotAllowed(NOT_ALLOWED, 'POST');
      },
    });
  }
}

/**
 * POST /mcp. Registered before the REST modules so that it sees each of them register: every
 * tool, resource and prompt takes its auth and schemas from its REST route, and the catalogue
 * is built once, when the app is ready.
 */
export const mcp = fp(
  async (app: FastifyInstance) => {
    const restRoutes = new RestRoutes();
    app.addHook('onRoute', (route) => restRoutes.record(route));
    let catalogue: Catalogue | undefined;
    app.addHook('onReady', async () => {
      catalogue = buildCatalogue(restRoutes);
    });
    app.addHook('onListen', async () => {
      await loadSdk();
    });
    await app.register(mcpRoutes, {
      catalogue: () => {
        if (!catalogue) throw new Error('MCP catalogue used before the app was ready');
        return catalogue;
      },
    });
  },
  { name: 'prodgraph-mcp', dependencies: HTTP_LAYER },
);
