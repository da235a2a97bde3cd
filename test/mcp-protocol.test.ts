import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeKey } from '../src/auth/key-service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { get } from './support/http.js';
import { smallProduction } from './support/fixtures.js';
import { call, readTwins, rpc } from './support/mcp.js';
import { ALL_SCOPES, importRoundTrip, submit, type Refs } from './support/round-trip.js';

const error = (id: string | number | null, code: number, message: RegExp) => ({ id, code, message });

function assertRpcError(
  reply: { status: number; body: any }, // eslint-disable-line @typescript-eslint/no-explicit-any
  expected: { id: string | number | null; code: number; message: RegExp },
) {
  assert.equal(reply.status, 200);
  assert.equal(reply.body.jsonrpc, '2.0');
  assert.equal(reply.body.id, expected.id);
  assert.equal(reply.body.result, undefined);
  assert.equal(reply.body.error.code, expected.code);
  assert.match(reply.body.error.message, expected.message);
}

for (const dialect of DIALECTS) {
  describe(`POST /mcp, the JSON-RPC edges [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let wide: string;
    let vendor: string;
    let reader: string;

    before(async () => {
      env = await createEnv(dialect, {
        PRODGRAPH_MAX_SUBMISSION_FILES: '2',
        PRODGRAPH_MAX_UPLOAD_BYTES: '1000',
        PRODGRAPH_MAX_MCP_BODY_BYTES: '20000',
        // a tool costs what its REST twin costs to assemble: REST's kept answers are counted
        // in answer-cache.test.ts
        PRODGRAPH_ANSWER_CACHE_MB: '0',
      });
      refs = await importRoundTrip(env, 'film');
      wide = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      vendor = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      reader = await env.mint({
        production: 'film',
        scopes: ['read', 'submit:turnover'],
        engagement: 'eng-read',
      });
    });
    after(() => env.close());

    it('serves Accept: application/json alone (and no Accept), echoing string and integer ids', async () => {
      const byInt = await rpc(env.app, wide, { jsonrpc: '2.0', id: 7, method: 'tools/list' });
      assert.equal(byInt.status, 200);
      assert.match(String(byInt.headers['content-type']), /^application\/json/);
      assert.equal(byInt.body.id, 7);
      assert.equal(byInt.body.result.tools.length, 15);
      const byString = await rpc(
        env.app,
        wide,
        { jsonrpc: '2.0', id: 'req-1', method: 'ping' },
        { accept: '' },
      );
      assert.deepEqual(byString.body, { jsonrpc: '2.0', id: 'req-1', result: {} });
      const init = await rpc(env.app, wide, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'curl', version: '8' },
        },
      });
      assert.equal(init.body.id, 0);
      assert.equal(init.body.result.protocolVersion, '2025-06-18');
      assert.deepEqual(init.body.result.serverInfo, { name: 'prodgraph', version: '0.1.0' });
      assert.deepEqual(Object.keys(init.body.result.capabilities).sort(), ['prompts', 'resources', 'tools']);
      assert.equal(init.headers['mcp-session-id'], undefined);
      // an unknown version is answered with the SDK's latest; an unsupported header is the transport's 400
      const future = await rpc(env.app, wide, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '1999-01-01',
          capabilities: {},
          clientInfo: { name: 'old', version: '1' },
        },
      });
      assert.match(future.body.result.protocolVersion, /^20\d\d-\d\d-\d\d$/);
      assert.notEqual(future.body.result.protocolVersion, '1999-01-01');
      const header = await rpc(
        env.app,
        wide,
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { 'mcp-protocol-version': '1999-01-01' },
      );
      assert.equal(header.status, 400);
      assert.match(header.body.error.message, /Unsupported protocol version/);
    });

    it('refuses what is not one JSON-RPC 2.0 request with -32700 / -32600', async () => {
      const cases: Array<[unknown, ReturnType<typeof error>]> = [
        ['{"jsonrpc": "2.0", "id": 1, ', error(null, -32700, /^Parse error/)],
        ['', error(null, -32700, /^Parse error/)],
        [
          '{"__proto__": {"x": 1}, "jsonrpc": "2.0", "id": 1, "method": "ping"}',
          error(null, -32700, /^Parse error/),
        ],
        [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], error(null, -32600, /batches are not supported/)],
        [[], error(null, -32600, /batches are not supported/)],
        ['"ping"', error(null, -32600, /one JSON-RPC 2.0 request object/)],
        [{ jsonrpc: '1.0', id: 2, method: 'ping' }, error(2, -32600, /jsonrpc: must be 2.0/)],
        [{ id: 3, method: 'ping' }, error(3, -32600, /jsonrpc: is required/)],
        [{ jsonrpc: '2.0', id: 4 }, error(4, -32600, /method: is required/)],
        [{ jsonrpc: '2.0', id: 'r', result: {} }, error('r', -32600, /method: is required/)],
        [{ jsonrpc: '2.0', id: 5, method: 42 }, error(5, -32600, /method/)],
        [
          { jsonrpc: '2.0', id: 1.5, method: 'ping' },
          error(null, -32600, /id: must be a string or an integer/),
        ],
        [
          { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' },
          error(null, -32600, /id: must be a string or an integer/),
        ],
        [{ jsonrpc: '2.0', id: 6, method: 'tools/list', params: [1] }, error(6, -32600, /params/)],
      ];
      for (const [body, expected] of cases) assertRpcError(await rpc(env.app, wide, body), expected);
    });

    it('names unknown methods (-32601), tools, prompts and bad params (-32602), resources (-32002)', async () => {
      for (const method of ['tools/delete', 'constructor', 'toString', '__proto__', 'x'.repeat(10_000)]) {
        assertRpcError(
          await rpc(env.app, wide, { jsonrpc: '2.0', id: 1, method }),
          error(1, -32601, /not found/),
        );
      }
      assertRpcError(
        await rpc(env.app, wide, call(2, 'get_people')),
        error(2, -32602, /unknown tool "get_people"/),
      );
      assertRpcError(
        await rpc(env.app, wide, {
          jsonrpc: '2.0',
          id: 3,
          method: 'prompts/get',
          params: { name: 'gossip' },
        }),
        error(3, -32602, /unknown prompt "gossip"/),
      );
      assertRpcError(
        await rpc(env.app, wide, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } }),
        error(4, -32602, /params\.name/),
      );
      assertRpcError(
        await rpc(env.app, wide, {
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/call',
          params: { name: 'get_asset', arguments: 7 },
        }),
        error(5, -32602, /params\.arguments/),
      );
      const unknown = await rpc(env.app, wide, {
        jsonrpc: '2.0',
        id: 'res',
        method: 'resources/read',
        params: { uri: 'prodgraph://people' },
      });
      assertRpcError(unknown, error('res', -32002, /resource not found: prodgraph:\/\/people/));
      assert.deepEqual(unknown.body.error.data, { uri: 'prodgraph://people' });
    });

    it('a notification is 202 with no body, whatever its method', async () => {
      for (const method of ['notifications/initialized', 'tools/call']) {
        const reply = await rpc(env.app, wide, {
          jsonrpc: '2.0',
          method,
          params: { name: 'submit_turnover' },
        });
        assert.equal(reply.status, 202);
        assert.equal(reply.text, '');
      }
    });

    it('checks the key before reading the body: 401 {detail} with WWW-Authenticate', async () => {
      const revoked = await env.mint({ production: 'film', label: 'soon revoked' });
      await revokeKey(env.handle.db, revoked.split('_').slice(0, 2).join('_'));
      for (const [token, detail] of [
        [undefined, 'missing or invalid API key'],
        ['pgk_nothere_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'unknown or revoked API key'],
        [revoked, 'unknown or revoked API key'],
      ] as const) {
        const reply = await rpc(env.app, token, '{not json');
        assert.equal(reply.status, 401);
        assert.deepEqual(reply.body, { detail, code: 'unauthorized' });
        assert.match(String(reply.headers['www-authenticate']), /^Bearer/);
      }
    });

    it("answers a surface, scope or grant refusal as its REST twin's HTTP 403, unwrapped", async () => {
      const wideRead = await env.mint({ production: 'film', scopes: ['read'] });
      const submitRest = async (token: string) => {
        const r = await submit(env, token, refs['dl-plates']!, [
          { name: 'files', filename: 'a.txt', content: Buffer.from('hi') },
        ]);
        return { status: r.statusCode, body: r.json() };
      };
      const pairs: Array<[string, unknown, () => Promise<{ status: number; body: unknown }>]> = [
        [vendor, call(1, 'get_production'), () => get(env.app, '/api/v1/production', vendor)],
        [
          vendor,
          call(1, 'get_schedule', { episode_id: 'not even valid' }),
          () => get(env.app, '/api/v1/schedule', vendor),
        ],
        [wideRead, call(1, 'get_purchase_orders'), () => get(env.app, '/api/v1/purchase-orders', wideRead)],
        [
          vendor,
          { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'prodgraph://scenes' } },
          () => get(env.app, '/api/v1/scenes', vendor),
        ],
        [
          vendor,
          { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'approvals_digest' } },
          () => get(env.app, '/api/v1/approvals', vendor),
        ],
        [
          reader,
          call(1, 'submit_turnover', {
            id: refs['dl-plates'],
            files: [{ filename: 'a.txt', content_base64: 'aGk=' }],
          }),
          () => submitRest(reader),
        ],
        [
          wide,
          call(1, 'submit_turnover', {
            id: refs['dl-plates'],
            files: [{ filename: 'a.txt', content_base64: 'aGk=' }],
          }),
          () => submitRest(wide),
        ],
      ];
      for (const [token, body, restCall] of pairs) {
        const rest = await restCall();
        const mcp = await rpc(env.app, token, body);
        assert.equal(rest.status, 403);
        assert.equal(mcp.status, 403, JSON.stringify(body));
        assert.deepEqual(mcp.body, rest.body);
        assert.match(String(mcp.headers['content-type']), /^application\/json/);
      }
      const media = await env.handle.db
        .selectFrom('media')
        .where('work_item_id', 'is not', null)
        .select('id')
        .execute();
      assert.equal(media.length, 0, 'a refused submission leaves nothing');
    });

    it('tool refusals that are not about the key are tool errors with the REST detail', async () => {
      const text = async (body: unknown) => {
        const reply = await rpc(env.app, wide, body);
        assert.equal(reply.status, 200);
        assert.equal(reply.body.result.isError, true);
        return reply.body.result.content[0].text as string;
      };
      assert.equal(await text(call(1, 'get_asset', { node_id: 'seven' })), 'node_id: must be a whole number');
      assert.equal(await text(call(1, 'get_asset', {})), 'node_id: is required');
      assert.equal(await text(call(1, 'list_assets', { departement: 'vfx' })), 'departement: unknown field');
      assert.equal(
        await text(call(1, 'get_scene_bundle', { node_id: 2 ** 40 })),
        'node_id: must be <= 2147483647',
      );
      assert.equal(await text(call(1, 'get_activity', { limit: 0 })), 'limit: must be >= 1');
      const rest = await get(env.app, '/api/v1/assets?department=nope', wide);
      assert.equal(await text(call(1, 'list_assets', { department: 'nope' })), rest.body.detail);
      const missing = await get(env.app, '/api/v1/departments/nope', wide);
      assert.equal(missing.status, 404);
      assert.equal(await text(call(1, 'get_department', { slug: 'nope' })), missing.body.detail);
    });

    it('arguments take JSON types (released: true, limit: 100) and REST strings; list tools speak of next_cursor', async () => {
      const result = async (args: Record<string, unknown>) => {
        const reply = await rpc(env.app, wide, call(1, 'list_assets', args));
        assert.equal(reply.status, 200);
        return reply.body.result as {
          isError?: boolean;
          structuredContent: { assets: Array<{ node_id: number }>; next_cursor?: string };
          content: Array<{ text: string }>;
        };
      };
      const rest = await get(env.app, '/api/v1/assets?released=true', wide);
      for (const released of [true, 'true', '1']) {
        const r = await result({ released });
        assert.ok(!r.isError, r.content[0]!.text);
        assert.deepEqual(
          r.structuredContent.assets.map((a) => a.node_id),
          (rest.body as Array<{ node_id: number }>).map((a) => a.node_id),
          String(released),
        );
      }
      const all = await get(env.app, '/api/v1/assets', wide);
      const none = await result({ released: false });
      assert.equal(none.structuredContent.assets.length, (all.body as unknown[]).length);
      const page = await result({ released: true, limit: 1 });
      assert.equal(page.structuredContent.assets.length, 1);
      assert.equal(typeof page.structuredContent.next_cursor, 'string');
      const next = await result({ released: true, limit: 1, cursor: page.structuredContent.next_cursor });
      assert.equal(
        next.structuredContent.assets[0]!.node_id,
        (rest.body as Array<{ node_id: number }>)[1]!.node_id,
      );
      const refused = await result({ released: 'yes' });
      assert.equal(refused.isError, true);
      const listed = await rpc(env.app, wide, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const tools = listed.body.result.tools as Array<{
        name: string;
        inputSchema: { properties: Record<string, { type: unknown; description?: string }> };
      }>;
      for (const tool of tools) {
        for (const [name, p] of Object.entries(tool.inputSchema.properties)) {
          assert.doesNotMatch(String(p.description ?? ''), /Link/, `${tool.name}.${name}`);
        }
      }
      const assets = tools.find((t) => t.name === 'list_assets')!;
      assert.deepEqual(assets.inputSchema.properties.released!.type, ['boolean', 'string']);
      assert.equal(assets.inputSchema.properties.limit!.type, 'integer');
      assert.match(String(assets.inputSchema.properties.cursor!.description), /next_cursor/);
    });

    it("a tool call costs exactly its REST twin's queries, and another production's ids are not found", async () => {
      const queriesOf = async (work: () => Promise<unknown>) => {
        const start = env.queries.sql.length;
        await work();
        return env.queries.sql.slice(start).filter((q) => !/set "last_used_at"/.test(q)).length;
      };
      for (const token of [wide, vendor]) {
        for (const twin of readTwins(refs)) {
          // the first read of a vendor's doors loads and keeps them, and a first refusal of each
          // twin is recorded in the audit trail (once a minute); both twins then read the same
          await get(env.app, `/api/v1${twin.url}`, token);
          await rpc(env.app, token, call(1, twin.tool, twin.args));
          const rest = await queriesOf(() => get(env.app, `/api/v1${twin.url}`, token));
          const mcp = await queriesOf(() => rpc(env.app, token, call(1, twin.tool, twin.args)));
          assert.equal(mcp, rest, twin.tool);
        }
      }
      await env.import(smallProduction('other'));
      const outsider = await env.mint({ production: 'other', scopes: ALL_SCOPES });
      for (const [tool, url] of [
        ['get_asset', `/assets/${refs['co-coat']}`],
        ['get_scene_bundle', `/bundles/scene/${refs.sc1}`],
      ] as const) {
        const rest = await get(env.app, `/api/v1${url}`, outsider);
        const mcp = await rpc(env.app, outsider, call(1, tool, { node_id: Number(url.split('/').pop()) }));
        assert.equal(rest.status, 404);
        assert.deepEqual(mcp.body.result.content, [{ type: 'text', text: rest.body.detail }]);
      }
    });

    it('submission limits: no file 422, too many files or too large 413, over the body limit HTTP 413', async () => {
      const file = (name: string, bytes: number) => ({
        filename: name,
        content_base64: Buffer.alloc(bytes, 1).toString('base64'),
      });
      const submitMcp = (files: unknown[]) =>
        rpc(env.app, vendor, call(1, 'submit_turnover', { id: refs['dl-plates'], files }));
      // the tool's input schema says it (minItems 1), and its arguments are checked against it
      const none = await submitMcp([]);
      assert.equal(none.body.result.isError, true);
      assert.match(none.body.result.content[0].text, /^files: must NOT have fewer than 1 items/);
      const three = await submitMcp([file('a', 10), file('b', 10), file('c', 10)]);
      assert.equal(three.body.result.isError, true);
      assert.match(three.body.result.content[0].text, /^files: at most 2 files/);
      const big = await submitMcp([file('big.bin', 1001)]);
      assert.equal(
        big.body.result.content[0].text,
        'files: "big.bin" is larger than the limit of 1000 bytes',
      );
      const bad = await submitMcp([{ filename: 'x', content_base64: 'not base64!' }]);
      assert.match(bad.body.result.content[0].text, /^files\[0\]\.content_base64: must match pattern/);
      const huge = await submitMcp([file('a', 16000)]);
      assert.equal(huge.status, 413);
      assert.ok(typeof huge.body.detail === 'string');
      const kept = await env.handle.db.selectFrom('work_items').select('id').execute();
      assert.equal(kept.length, 0, 'nothing half-written');
      const ok = await submitMcp([file('a.bin', 1000), file('b.bin', 5)]);
      assert.deepEqual(
        ok.body.result.structuredContent.media.map((m: { label: string }) => m.label),
        ['a.bin', 'b.bin'],
      );
    });

    it('a request with a member JSON-RPC 2.0 does not define is answered, the member ignored', async () => {
      // JSON-RPC 2.0 names jsonrpc, method, params and id and forbids no other member: valid JSON
      // with one more is a request like any other, never -32700 (which is for bytes that are not JSON)
      const extra = await rpc(env.app, wide, { jsonrpc: '2.0', id: 1, method: 'tools/list', zz: 1 });
      assert.equal(extra.status, 200);
      assert.equal(extra.body.id, 1);
      assert.equal(extra.body.error, undefined);
      assert.equal(extra.body.result.tools.length, 15);
      const called = await rpc(env.app, wide, { ...call(2, 'get_production'), meta: { from: 'a test' } });
      assert.equal(called.status, 200);
      assert.equal(typeof called.body.result.structuredContent.title, 'string');
    });

    it("submit_turnover's input schema states what the tool refuses: no file, an empty one, a long title", async () => {
      const listed = await rpc(env.app, vendor, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const tool = listed.body.result.tools.find((t: { name: string }) => t.name === 'submit_turnover');
      const props = tool.inputSchema.properties;
      assert.equal(props.files.minItems, 1);
      assert.ok(props.files.items.properties.content_base64.minLength >= 1);
      assert.equal(props.title.maxLength, 500);
      assert.equal(props.note.maxLength, 20000);
      const submitMcp = (args: Record<string, unknown>) =>
        rpc(env.app, vendor, call(1, 'submit_turnover', { id: refs['dl-plates'], ...args }));
      const items = async () => (await env.handle.db.selectFrom('work_items').select('id').execute()).length;
      const before = await items();
      const refused = [
        await submitMcp({ files: [] }),
        await submitMcp({ files: [{ filename: 'empty.bin', content_base64: '' }] }),
        await submitMcp({ title: 'x'.repeat(600), files: [{ filename: 'a.bin', content_base64: 'aGk=' }] }),
      ];
      for (const r of refused) {
        assert.equal(r.body.result.isError, true, JSON.stringify(r.body));
        assert.match(r.body.result.content[0].text, /^(files|title)/);
      }
      assert.equal(await items(), before, 'nothing written');
    });

    it('GET and DELETE /mcp are 405 {detail}; a body that is not JSON is 415 {detail}', async () => {
      for (const method of ['GET', 'DELETE'] as const) {
        const reply = await env.app.inject({
          method,
          url: '/mcp',
          headers: { authorization: `Bearer ${wide}` },
        });
        assert.equal(reply.statusCode, 405);
        assert.equal(reply.headers.allow, 'POST');
        assert.ok(typeof reply.json().detail === 'string');
      }
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
      ]) {
        const reply = await rpc(env.app, wide, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
          'content-type': type,
        });
        assert.equal(reply.status, 415, type);
        assert.ok(typeof reply.body.detail === 'string');
      }
    });
  });
}
