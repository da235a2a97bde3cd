import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../src/domain/vocabulary.js';
import { ERROR_CODES } from '../src/errors.js';
import { createEnv, type TestEnv } from './support/env.js';

/** Routes that take no key: the base URL (a pointer to /docs), health, the off-plane file route (a ticket instead) and the document itself. */
// GET and DELETE /mcp answer 405 to anyone: there is nothing behind them to protect
const PUBLIC = new Set([
  'GET /',
  'GET /healthz',
  'GET /media/*',
  'GET /api/v1/openapi.json',
  'GET /mcp',
  'DELETE /mcp',
]);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/*
 * POST /mcp takes any valid key (each tool then applies its REST twin's scope and surface), and its
 * body is a JSON-RPC envelope whose extra members JSON-RPC 2.0 does not refuse.
 */
const ANY_KEY = new Set(['POST /mcp']);

interface Operation {
  security?: unknown[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/** `/assets/:node_id` and `/media/*` as @fastify/swagger writes them. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');

// One app answers for both databases: the routes do not depend on the dialect.
describe('route inventory: Fastify routes, declared auth and the OpenAPI document agree', () => {
  let env: TestEnv;
  let doc: { paths: Record<string, Record<string, Operation>> };
  before(async () => {
    env = await createEnv('sqlite');
    doc = env.app.swagger() as typeof doc;
  });
  after(() => env.close());

  const served = () =>
    env.app.routeTable.filter((r) => !r.url.startsWith('/docs') && !r.hidden && r.method !== 'OPTIONS');

  it('every registered route is in the OpenAPI document, and every documented operation is served', () => {
    const registered = new Set(served().map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`));
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops)
          .filter((m) => METHODS.includes(m))
          .map((m) => `${m} ${path}`),
      ),
    );
    assert.deepEqual(
      [...registered].filter((r) => !documented.has(r)),
      [],
      'served but not documented',
    );
    assert.deepEqual(
      [...documented].filter((d) => !registered.has(d)),
      [],
      'documented but not served',
    );
    assert.ok(registered.size >= 30, `only ${registered.size} routes`);
  });

  it('every route declares its auth: scopes and surface, or public for the few that take no key', () => {
    for (const r of env.app.routeTable.filter((t) => !t.url.startsWith('/docs'))) {
      const name = `${r.method} ${r.url}`;
      if (PUBLIC.has(name)) {
        assert.equal(r.auth, 'public', name);
        continue;
      }
      assert.ok(r.auth && r.auth !== 'public', `${name} declares no scope and surface`);
      assert.ok(r.auth.scopes.length > 0 || ANY_KEY.has(name), `${name}: no scope`);
      for (const s of r.auth.scopes) assert.ok((SCOPES as readonly string[]).includes(s), `${name}: ${s}`);
      assert.ok(['production', 'round-trip'].includes(r.auth.surface), `${name}: surface ${r.auth.surface}`);
    }
  });

  it('the document states each operation’s key, its refusals as ErrorBody, and closed JSON bodies', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!METHODS.includes(method)) continue;
        const name = `${method.toUpperCase()} ${path}`;
        const keyed = path.startsWith('/api/v1/');
        if (keyed) {
          assert.deepEqual(op.security, [{ bearerAuth: [] }], name);
          for (const status of ['401', '403']) assert.ok(op.responses?.[status], `${name}: no ${status}`);
        }
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          if (Number(status) < 400) continue;
          const schema = response.content?.['application/json']?.schema as
            { required?: string[]; properties?: { code?: { enum?: string[] } } } | undefined;
          assert.deepEqual(schema?.required, ['detail', 'code'], `${name} ${status}`);
          assert.deepEqual(schema?.properties?.code?.enum, Object.keys(ERROR_CODES), `${name} ${status}`);
        }
        const json = op.requestBody?.content?.['application/json']?.schema;
        if (json && !ANY_KEY.has(name))
          assert.equal(json.additionalProperties, false, `${name}: a JSON body must refuse unknown fields`);
      }
    }
  });
});
