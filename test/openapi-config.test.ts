import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ConfigError, loadConfig, parseDbTarget } from '../src/config.js';
import { createEnv, type TestEnv } from './support/env.js';
import { get } from './support/http.js';

/** The only /api/v1 operations open without a key: the browser's steps of a console sign-in. */
const PUBLIC = new Set([
  'get /api/v1/auth/sign-in-options',
  'get /api/v1/auth/oidc/login',
  'get /api/v1/auth/oidc/callback',
]);

describe('OpenAPI document and docs page', () => {
  let env: TestEnv;
  before(async () => {
    env = await createEnv('sqlite');
  });
  after(() => env.close());

  it('/api/v1/openapi.json is valid OpenAPI 3.1 and documents every /api/v1 route with its auth', async () => {
    const r = await get(env.app, '/api/v1/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.1.0');
    const result = await new Validator().validate(r.body);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.ok(env.app.hasRoute({ method: 'GET', url: '/api/v1/production' }));
    for (const [path, ops] of Object.entries(
      r.body.paths as Record<
        string,
        Record<string, { security: unknown; responses: Record<string, unknown>; description: string }>
      >,
    )) {
      if (!path.startsWith('/api/v1')) continue;
      for (const [method, op] of Object.entries(ops)) {
        // the browser's first steps of a console sign-in come before any key or session
        if (PUBLIC.has(`${method} ${path}`)) {
          assert.deepEqual(op.security, [], `${method} ${path} needs no key`);
          continue;
        }
        assert.deepEqual(op.security, [{ bearerAuth: [] }], `${method} ${path} declares bearer auth`);
        assert.ok(op.responses['401'] && op.responses['403'], `${method} ${path} documents 401 and 403`);
        assert.match(op.description, /Scope `|Any valid key/, `${method} ${path} states its scope`);
      }
    }
    assert.equal(r.body.components.securitySchemes.bearerAuth.scheme, 'bearer');
  });

  it('/docs serves the API reference page', async () => {
    const page = await env.app.inject({ url: '/docs' });
    const final =
      page.statusCode === 302 ? await env.app.inject({ url: String(page.headers.location) }) : page;
    assert.equal(final.statusCode, 200);
    assert.match(final.body, /swagger-ui/i);
  });
});

describe('configuration', () => {
  it('reads SQLite paths, sqlite: URLs and PostgreSQL URLs', () => {
    assert.equal(parseDbTarget('sqlite:data/x.db').dialect, 'sqlite');
    assert.equal(parseDbTarget('./x.db').dialect, 'sqlite');
    assert.deepEqual(parseDbTarget('postgres://u@h:5432/d'), {
      dialect: 'postgres',
      url: 'postgres://u@h:5432/d',
    });
    assert.equal(parseDbTarget('postgresql://u@h/d').dialect, 'postgres');
  });

  it('flags win over the environment, which wins over defaults', () => {
    const c = loadConfig({ port: '9000' }, { PORT: '7000', HOST: '0.0.0.0' });
    assert.equal(c.port, 9000);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(loadConfig({}, {}).port, 8080);
    assert.ok(loadConfig({}, {}).db.dialect === 'sqlite');
  });

  it('fails fast with a clear message on bad values', () => {
    assert.throws(
      () => loadConfig({ port: 'eighty' }, {}),
      (e: Error) => e instanceof ConfigError && /port: "eighty"/.test(e.message),
    );
    assert.throws(() => loadConfig({ port: '70000' }, {}), /port: 70000 is out of range/);
    assert.throws(() => loadConfig({ db: 'mysql://x' }, {}), /unsupported URL scheme/);
    assert.throws(() => loadConfig({}, { PRODGRAPH_MAX_UPLOAD_BYTES: '-1' }), /PRODGRAPH_MAX_UPLOAD_BYTES/);
    assert.throws(() => loadConfig({}, { PRODGRAPH_TICKET_SECRET: 'short' }), /at least 32 characters/);
    assert.throws(() => loadConfig({}, { PRODGRAPH_LOG_LEVEL: 'loud' }), /PRODGRAPH_LOG_LEVEL/);
  });
});
