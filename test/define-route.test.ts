import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Type } from 'typebox';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { declareRoute, routesOf } from '../src/http/define-route.js';

/*
 * One route declaration: what a route answers beyond its own schema comes from declareRoute
 * alone, and a route of the service registered any other way stops the app at start-up.
 */

const statuses = (route: { schema?: unknown }) =>
  Object.keys((route.schema as { response: object }).response).map(Number);

describe('declareRoute', () => {
  const write = { scopes: ['write'], surface: 'production' } as const;

  it('a write that takes a key, an upload and an idempotency key answers every standard refusal', () => {
    const route = declareRoute(['POST'], '/things', {
      config: { auth: write, upload: { maxBytes: 1000 }, idempotent: true },
      bodyLimit: 5000,
      schema: { consumes: ['multipart/form-data'], response: { 201: Type.Object({}) } },
    });
    assert.deepEqual(statuses(route), [201, 401, 403, 413, 429, 503, 507]);
    assert.equal(route.bodyLimit, 1000, 'the upload limit caps the body');
    assert.deepEqual((route.config as { bodyRule?: unknown }).bodyRule, {
      accepts: ['multipart/form-data'],
      required: true,
    });
    const schema = route.schema as Record<string, unknown>;
    assert.deepEqual(schema.security, [{ bearerAuth: [] }]);
    assert.match(String(schema.description), /Scope `write`\. Production-wide keys only/);
    assert.deepEqual(Object.keys((schema.headers as { properties: object }).properties), ['idempotency-key']);
    assert.deepEqual(schema.querystring, Type.Object({}, { additionalProperties: false }));
  });

  it('a public read documents no key, no 507; opting out of the rate limit drops the 429', () => {
    const route = declareRoute(['GET'], '/open', {
      config: { auth: 'public', rateLimit: false },
      schema: { response: { 200: Type.Object({}) } },
    });
    assert.deepEqual(statuses(route), [200, 503]);
    assert.equal((route.schema as Record<string, unknown>).security, undefined);
  });

  it('a hidden route gets no outage or rate-limit answers, and a declared query schema is kept', () => {
    const query = Type.Object({ q: Type.String() });
    const route = declareRoute(['GET'], '/hidden', {
      config: { auth: 'public' },
      schema: { hide: true, querystring: query },
    });
    assert.deepEqual(statuses(route), []);
    assert.equal((route.schema as Record<string, unknown>).querystring, query);
  });

  it('refuses a route without an auth, and an upload without a sane limit', () => {
    assert.throws(() => declareRoute(['GET'], '/x', { config: {} }), /route GET \/x declares no auth/);
    assert.throws(
      () => declareRoute(['POST'], '/x', { config: { auth: write, upload: { maxBytes: 0 } } }),
      /maxBytes must be a positive whole number/,
    );
  });
});

describe('the route table refuses an undeclared route at start-up', () => {
  let app: App;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'prodgraph-define-route-'));
    app = await buildApp({
      config: loadConfig({ db: join(dir, 'd.db'), media: join(dir, 'media') }, {}),
      logger: false,
    });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a route under /api/v1 registered with app.get is refused, naming it', () => {
    assert.throws(
      () => app.get('/api/v1/sneaky', { config: { auth: 'public' } }, async () => ({})),
      /route GET \/api\/v1\/sneaky was not declared with declareRoute/,
    );
  });

  it('a route elsewhere that declares an auth is refused too; one through routesOf answers', async () => {
    assert.throws(
      () => app.get('/elsewhere', { config: { auth: 'public' } }, async () => ({})),
      /route GET \/elsewhere was not declared/,
    );
    routesOf(app).get('/api/v1/declared', { config: { auth: 'public' } }, async () => ({ ok: true }));
    const r = await app.inject({ url: '/api/v1/declared?x=1' });
    assert.equal(r.statusCode, 422, 'no query schema declared: the query string is closed');
    assert.equal((await app.inject({ url: '/api/v1/declared' })).statusCode, 200);
  });
});
