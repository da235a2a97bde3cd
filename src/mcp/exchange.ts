import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { isDatabaseRefusal } from '../db/refusals.js';
import { isAppError } from '../errors.js';
import type { Page } from '../domain/page.js';
import { authorizeOrRecord } from '../modules/audit/refused-access.js';
import { describeValidation, type ValidationItem } from '../validation.js';
import type { Catalogue } from './catalogue.js';
import { errorBody, type JsonRpcRequest } from './envelope.js';
import { restArguments } from './json-schema.js';
import {
  answersAsHttp,
  INVALID_PARAMS,
  RESOURCE_NOT_FOUND,
  RpcError,
  toolError,
  toolResult,
} from './outcome.js';

interface RequestSchema {
  safeParse(value: unknown): { error?: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}

/**
 * The SDK's own request schemas for the methods served. The SDK checks them too, but answers
 * a failure with -32603 (an internal error) and a dump of the parser's complaints; a client's
 * mistake is -32602 naming the field.
 */
const REQUESTS = new Map<string, RequestSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
  ['prompts/list', ListPromptsRequestSchema],
  ['prompts/get', GetPromptRequestSchema],
]);

function paramsProblem(message: JsonRpcRequest): string | undefined {
  const issue = REQUESTS.get(message.method)?.safeParse(message).error?.issues[0];
  if (!issue) return undefined;
  const where = issue.path.map(String).join('.');
  return `Invalid params: ${where ? `${where}: ` : ''}${issue.message}`;
}

/** The SDK only uses it for elicitation, which this server never asks for; one is plenty. */
const schemaValidator = new AjvJsonSchemaValidator();

const CAPABILITIES = { tools: {}, resources: {}, prompts: {} };

/** The answer to one JSON-RPC request, or the HTTP refusal that replaces it. */
export type Exchange = { status: number; body: string } | { refusal: unknown };

interface Call {
  ctx: AppContext;
  principal: Principal;
  catalogue: Catalogue;
  /** A refusal that must leave JSON-RPC and answer as HTTP (see answersAsHttp). */
  refusal?: unknown;
  /** The request's logger: a refusal the database made is worth a look, as on REST. */
  log?: RefusalLog;
}

export interface RefusalLog {
  warn(obj: object, msg: string): void;
}

/**
 * Runs `work`; a failure that answers as HTTP is parked on the call (the SDK then writes an
 * error response nobody reads), anything else goes to `otherwise`.
 */
async function guarded<T>(call: Call, work: () => Promise<T>, otherwise: (err: unknown) => T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof RpcError) throw err;
    if (answersAsHttp(err)) {
      call.refusal = err;
      throw new RpcError(-32603, 'refused');
    }
    if (isDatabaseRefusal(err)) call.log?.warn({ err: err.cause }, 'request refused by the database');
    return otherwise(err);
  }
}

const detailOf = (err: unknown) => (isAppError(err) ? err.detail : String(err));

/** A list travels under its key; a page's next cursor beside it (REST puts it in a Link header). */
function structuredOf(listKey: string | undefined, value: unknown): Record<string, unknown> {
  if (!listKey) return value as Record<string, unknown>;
  if (Array.isArray(value)) return { [listKey]: value };
  const page = value as Page<unknown>;
  return { [listKey]: page.items, ...(page.next !== null ? { next_cursor: page.next } : {}) };
}

async function callTool(call: Call, name: string, args: Record<string, unknown> | undefined) {
  const tool = call.catalogue.tools.get(name);
  if (!tool) throw new RpcError(INVALID_PARAMS, `unknown tool "${name}" (tools/list names them)`);
  return guarded<CallToolResult>(
    call,
    async () => {
      // the REST order: the key's surface and scope first, then its arguments
      await authorizeOrRecord(call.ctx.db, call.principal, tool.auth, `MCP tool ${name}`);
      const input = args ?? {};
      if (!tool.validate(input)) {
        return toolError(describeValidation((tool.validate.errors ?? []) as ValidationItem[], 'arguments'));
      }
      const value = await tool.spec.run(call.ctx, call.principal, restArguments(tool.inputSchema, input));
      return toolResult(structuredOf(tool.spec.listKey, value));
    },
    (err) => toolError(detailOf(err)),
  );
}

async function readResource(call: Call, uri: string) {
  const resource = call.catalogue.resources.get(uri);
  if (!resource) throw new RpcError(RESOURCE_NOT_FOUND, `resource not found: ${uri}`, { uri });
  return guarded(
    call,
    async () => {
      await authorizeOrRecord(call.ctx.db, call.principal, resource.auth, `MCP resource ${uri}`);
      const value = await resource.spec.run(call.ctx, call.principal);
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
    },
    (err) => {
      throw new RpcError(INVALID_PARAMS, detailOf(err));
    },
  );
}

async function getPrompt(call: Call, name: string, args: Record<string, string> | undefined) {
  const prompt = call.catalogue.prompts.get(name);
  if (!prompt) throw new RpcError(INVALID_PARAMS, `unknown prompt "${name}" (prompts/list names them)`);
  return guarded(
    call,
    async () => {
      const reads = call.principal.engagementId === null ? prompt.auth.production : prompt.auth.engagement;
      for (const auth of reads)
        await authorizeOrRecord(call.ctx.db, call.principal, auth, `MCP prompt ${name}`);
      const given = args ?? {};
      const declared = prompt.spec.arguments;
      const unknown = Object.keys(given).find((k) => !declared.some((a) => a.name === k));
      if (unknown !== undefined) {
        const names = declared.map((a) => a.name).join(', ');
        throw new RpcError(INVALID_PARAMS, `${unknown}: unknown argument (expected ${names})`);
      }
      const missing = declared.find((a) => a.required && !given[a.name]?.trim());
      if (missing) throw new RpcError(INVALID_PARAMS, `${missing.name}: is required`);
      return prompt.spec.render(call.ctx, call.principal, given);
    },
    (err) => {
      throw new RpcError(INVALID_PARAMS, detailOf(err));
    },
  );
}

function serverFor(call: Call): Server {
  const { catalogue } = call;
  const server = new Server(catalogue.info, {
    capabilities: CAPABILITIES,
    instructions: catalogue.instructions,
    jsonSchemaValidator: schemaValidator,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => catalogue.toolList);
  server.setRequestHandler(CallToolRequestSchema, (r) => callTool(call, r.params.name, r.params.arguments));
  server.setRequestHandler(ListResourcesRequestSchema, () => catalogue.resourceList);
  server.setRequestHandler(ReadResourceRequestSchema, (r) => readResource(call, r.params.uri));
  server.setRequestHandler(ListPromptsRequestSchema, () => catalogue.promptList);
  server.setRequestHandler(GetPromptRequestSchema, (r) => getPrompt(call, r.params.name, r.params.arguments));
  return server;
}

// The transport reads the URL only to describe the request to handlers, which do not look.
const ENDPOINT = 'http://prodgraph.local/mcp';

/**
 * One JSON-RPC request through a fresh SDK server and stateless transport (no session, JSON
 * responses, never SSE), fed the body Fastify has already parsed and checked.
 */
export async function exchange(
  catalogue: Catalogue,
  ctx: AppContext,
  principal: Principal,
  message: JsonRpcRequest,
  protocolVersion: string | undefined,
  log?: RefusalLog,
): Promise<Exchange> {
  const problem = paramsProblem(message);
  if (problem) return { status: 200, body: JSON.stringify(errorBody(INVALID_PARAMS, problem, message.id)) };
  const call: Call = { ctx, principal, catalogue, ...(log ? { log } : {}) };
  const server = serverFor(call);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  const headers: Record<string, string> = {
    // the answer is always one JSON body, so a client accepting only JSON is served
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  if (protocolVersion !== undefined) headers['mcp-protocol-version'] = protocolVersion;
  const response = await transport.handleRequest(new Request(ENDPOINT, { method: 'POST', headers }), {
    parsedBody: message,
  });
  // No close: once the one JSON response exists, a stateless transport holds no stream, timer or
  // pending request, and closing would only build a "connection closed" error for none of them.
  if (call.refusal !== undefined) return { refusal: call.refusal };
  return { status: response.status, body: await response.text() };
}
