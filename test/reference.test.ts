import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, type TestEnv } from './support/env.js';
import { documentValidator } from './support/openapi.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The main routes a reader starts from: each shows an example body. */
const EXAMPLES = [
  'get /api/v1/production',
  'get /api/v1/assets',
  'get /api/v1/scenes',
  'get /api/v1/deliveries',
  'get /api/v1/approvals',
  'get /api/v1/activity',
  'get /api/v1/bundles/scene/{node_id}',
  'get /api/v1/bundles/character/{node_id}',
  'get /api/v1/turnovers',
  'get /api/v1/media/{id}',
];

const LISTS = [
  'assets',
  'scenes',
  'approvals',
  'deliveries',
  'activity',
  'jobs',
  'turnovers',
  'bundles',
  'submissions',
];

describe('the reference: /docs and /api/v1/openapi.json', () => {
  let env: TestEnv;
  let doc: any;
  before(async () => {
    env = await createEnv('sqlite');
    doc = JSON.parse((await env.app.inject({ url: '/api/v1/openapi.json' })).body);
  });
  after(() => env.close());

  const operations = () =>
    Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
      Object.entries<any>(ops).map(([method, op]) => ({ name: `${method} ${path}`, op })),
    );

  it('describes every response of every operation by what its status means there', () => {
    const vague: string[] = [];
    for (const { name, op } of operations()) {
      for (const [status, r] of Object.entries<any>(op.responses)) {
        if (['Default Response', 'Refused', 'OK', ''].includes(r.description))
          vague.push(`${name} ${status}`);
      }
    }
    assert.deepEqual(vague, []);
    const assets = doc.paths['/api/v1/assets'].get.responses;
    assert.match(assets['200'].description, /Asset \(list row\)/);
    assert.match(assets['422'].description, /^Validation failed/);
    assert.match(assets['401'].description, /key/);
  });

  it('describes and types every parameter, the file route’s named wildcard `path` and ticket `t` included', () => {
    const bare: string[] = [];
    const untyped: string[] = [];
    for (const { name, op } of operations()) {
      for (const p of op.parameters ?? []) {
        if (!p.description && !p.schema?.description) bare.push(`${name} ${p.in}:${p.name}`);
        if (!['type', '$ref', 'anyOf', 'oneOf', 'enum', 'const'].some((k) => k in (p.schema ?? {})))
          untyped.push(`${name} ${p.in}:${p.name}`);
      }
    }
    assert.deepEqual(bare, []);
    assert.deepEqual(untyped, []);
    const fileRoute = doc.paths['/media/{path}'].get.parameters;
    const named = fileRoute.find((p: any) => p.name === 'path');
    assert.equal(named.in, 'path');
    assert.equal(named.schema.type, 'string');
    const ticket = fileRoute.find((p: any) => p.name === 't');
    assert.deepEqual([ticket.in, ticket.schema.type], ['query', 'string']);
    assert.match(ticket.description, /GET \/api\/v1\/media-ticket/);
  });

  it('lists every tag an operation names, once, each with its description', () => {
    const used = new Set(operations().flatMap(({ op }) => op.tags ?? []));
    const listed = (doc.tags ?? []).map((t: any) => t.name);
    assert.deepEqual([...listed].sort(), [...used].sort());
    assert.equal(new Set(listed).size, listed.length, 'each tag once');
    for (const tag of doc.tags) assert.ok(tag.description?.length > 10, `${tag.name} is described`);
  });

  it('documents paging on the lists that page: limit, cursor, updated_since and the Link header', () => {
    for (const list of LISTS) {
      const op = doc.paths[`/api/v1/${list}`].get;
      const names = op.parameters.map((p: any) => p.name);
      // every list that pages takes updated_since, but the bundles (each keeps its own ETag)
      const params = list === 'bundles' ? ['limit', 'cursor'] : ['limit', 'cursor', 'updated_since'];
      for (const n of params) assert.ok(names.includes(n), `${list}: ${n}`);
      assert.deepEqual(op.responses['200'].headers?.Link, { $ref: '#/components/headers/Link' }, list);
    }
    for (const feed of ['activity', 'jobs']) {
      const names = doc.paths[`/api/v1/${feed}`].get.parameters.map((p: any) => p.name);
      assert.ok(names.includes('before'), `${feed}: before`);
    }
  });

  it('shows an example body on the main routes, and every example is valid against its schema', () => {
    for (const name of EXAMPLES) {
      const [method, path] = name.split(' ');
      const media = doc.paths[path!][method!].responses['200'].content['application/json'];
      assert.ok(media.example !== undefined, `${name} shows an example`);
    }
    const check = documentValidator(doc);
    let checked = 0;
    for (const { name, op } of operations()) {
      for (const [status, r] of Object.entries<any>(op.responses)) {
        for (const media of Object.values<any>(r.content ?? {})) {
          if (media.example === undefined) continue;
          const problem = check(media.schema, media.example);
          assert.equal(problem, null, `${name} ${status}: ${problem}`);
          checked++;
        }
      }
    }
    assert.ok(checked >= EXAMPLES.length);
  });

  it('documents every header where it is sent: rate limits, Retry-After, replays, ETags, Location', () => {
    for (const name of Object.keys(doc.components.headers))
      assert.ok(doc.components.headers[name].description, name);
    const missing: string[] = [];
    const expect = (op: any, status: string, header: string, where: string) => {
      const ref = op.responses[status]?.headers?.[header]?.$ref;
      if (ref !== `#/components/headers/${header}`) missing.push(`${where} ${status} ${header}`);
    };
    for (const { name, op } of operations()) {
      const statuses = Object.keys(op.responses);
      // every operation states its validation refusal (an unknown query parameter at least) and 500
      for (const s of ['422', '500']) if (!statuses.includes(s)) missing.push(`${name} ${s}`);
      const replays = (op.parameters ?? []).some((p: any) => p.name === 'idempotency-key');
      for (const s of statuses) {
        const code = Number(s);
        if (code === 429 || code === 503) expect(op, s, 'Retry-After', name);
        if (code === 401) expect(op, s, 'WWW-Authenticate', name);
        if (code === 405) expect(op, s, 'Allow', name);
        if (statuses.includes('429') && code >= 200 && code < 300)
          for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
            expect(op, s, h, name);
        if (replays && code >= 200 && code < 300) expect(op, s, 'Idempotent-Replayed', name);
      }
    }
    const ops = doc.paths;
    for (const path of ['/api/v1/bundles/scene/{node_id}', '/api/v1/bundles/character/{node_id}']) {
      for (const s of ['200', '304'])
        for (const h of ['ETag', 'Cache-Control', 'Vary']) expect(ops[path].get, s, h, path);
    }
    for (const path of [
      '/api/v1/media/{id}/content',
      '/media/{path}',
      '/api/v1/admin/engagements/{id}/view/media/{media_id}/content',
    ]) {
      for (const s of ['200', '206', '304']) expect(ops[path].get, s, 'ETag', path);
      expect(ops[path].get, '206', 'Content-Range', path);
      const asked = ops[path].get.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name);
      assert.deepEqual(asked.sort(), ['if-none-match', 'if-range', 'range'], path);
    }
    expect(ops['/api/v1/assets'].post, '201', 'Location', 'createAsset');
    expect(ops['/api/v1/assets/{node_id}/versions'].post, '201', 'Location', 'landAssetVersion');
    expect(ops['/api/v1/media-ticket'].get, '200', 'Cache-Control', 'getMediaTicket');
    // every JSON answer a route compresses, refusals included (a 422 can pass 1 kB too): not media bytes
    const bytes = ['/api/v1/media/{id}/content', '/media/{path}'];
    for (const { name, op } of operations()) {
      for (const [s, r] of Object.entries<any>(op.responses)) {
        if (!r.content?.['application/json']) continue;
        const path = name.split(' ')[1]!;
        const compresses = !bytes.includes(path) && !path.endsWith('/view/media/{media_id}/content');
        for (const h of ['Content-Encoding', 'Vary']) {
          const has = r.headers?.[h] !== undefined;
          if (has !== compresses) missing.push(`${name} ${s} ${h} ${compresses ? 'missing' : 'wrongly'}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it('GET / points to /docs: a browser is redirected, a script told where everything is', async () => {
    const browser = await env.app.inject({
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml' },
    });
    assert.equal(browser.statusCode, 302);
    assert.equal(browser.headers.location, '/docs');
    const script = await env.app.inject({ url: '/' });
    assert.equal(script.statusCode, 200);
    assert.equal(JSON.parse(script.body).docs, '/docs');
    assert.match(String(script.headers.link), /<\/docs>; rel="service-doc"/);
  });
});
