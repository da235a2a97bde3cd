import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { App } from '../../src/app.js';
import type { Reply } from './http.js';
import type { Refs } from './round-trip.js';

/** The SDK's own client over a real socket, with the key in the Authorization header. */
export async function connectClient(baseUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'prodgraph-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** One raw POST /mcp through app.inject: the body as given (a string is sent verbatim). */
export async function rpc(
  app: App,
  token: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = res.body;
  const json = text !== '' && String(res.headers['content-type'] ?? '').includes('json');
  return { status: res.statusCode, body: json ? JSON.parse(text) : undefined, headers: res.headers, text };
}

export const call = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

export interface TwinCall {
  tool: string;
  args: Record<string, unknown>;
  /** The REST twin's URL under /api/v1 for the same question. */
  url: string;
  /** Where structuredContent carries an array answer. */
  listKey?: string;
}

/** Every read tool with arguments that exercise it on the round-trip fixture, and its REST twin. */
export const readTwins = (refs: Refs): TwinCall[] => [
  { tool: 'get_production', args: {}, url: '/production' },
  { tool: 'list_departments', args: {}, url: '/departments', listKey: 'departments' },
  { tool: 'get_department', args: { slug: 'costume' }, url: '/departments/costume' },
  { tool: 'list_scenes', args: {}, url: '/scenes', listKey: 'scenes' },
  {
    tool: 'list_assets',
    args: { department: 'costume', released: 'true' },
    url: '/assets?department=costume&released=true',
    listKey: 'assets',
  },
  { tool: 'get_asset', args: { node_id: refs['co-coat'] }, url: `/assets/${refs['co-coat']}` },
  { tool: 'get_schedule', args: {}, url: '/schedule', listKey: 'shoot_days' },
  { tool: 'list_deliveries', args: {}, url: '/deliveries', listKey: 'deliveries' },
  {
    tool: 'list_approvals',
    args: { status: 'pending' },
    url: '/approvals?status=pending',
    listKey: 'approvals',
  },
  { tool: 'get_activity', args: { limit: 3 }, url: '/activity?limit=3', listKey: 'activity' },
  { tool: 'get_scene_bundle', args: { node_id: refs.sc1 }, url: `/bundles/scene/${refs.sc1}` },
  // sc3 is granted to another vendor only: 404 for eng-pix on both surfaces
  { tool: 'get_scene_bundle', args: { node_id: refs.sc3 }, url: `/bundles/scene/${refs.sc3}` },
  {
    tool: 'get_character_bundle',
    args: { node_id: refs['ch-mara'] },
    url: `/bundles/character/${refs['ch-mara']}`,
  },
  { tool: 'list_turnovers', args: {}, url: '/turnovers', listKey: 'turnovers' },
  { tool: 'get_purchase_orders', args: {}, url: '/purchase-orders' },
];
