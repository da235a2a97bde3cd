import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { createEnv, type TestEnv } from './support/env.js';

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

const LISTS = ['assets', 'scenes', 'approvals', 'deliveries', 'activity', 'jobs', 'turnovers'];

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

  it('describes every parameter, the file route’s `*` included', () => {
    const bare: string[] = [];
    for (const { name, op } of operations()) {
      for (const p of op.parameters ?? []) {
        if (!p.description && !p.schema?.description) bare.push(`${name} ${p.in}:${p.name}`);
      }
    }
    assert.deepEqual(bare, []);
    const star = doc.paths['/media/{*}'].get.parameters.find((p: any) => p.name === '*');
    assert.equal(star.in, 'path');
  });

  it('documents paging on the lists that page: limit, cursor, updated_since and the Link header', () => {
    for (const list of LISTS) {
      const op = doc.paths[`/api/v1/${list}`].get;
      const names = op.parameters.map((p: any) => p.name);
      for (const n of ['limit', 'cursor', 'updated_since']) assert.ok(names.includes(n), `${list}: ${n}`);
      assert.ok(op.responses['200'].headers?.link?.description, `${list}: Link header`);
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
    const ajv = new Ajv({ strict: false, allErrors: true });
    ((addFormats as any).default ?? addFormats)(ajv);
    for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    }
    let checked = 0;
    for (const { name, op } of operations()) {
      for (const [status, r] of Object.entries<any>(op.responses)) {
        for (const media of Object.values<any>(r.content ?? {})) {
          if (media.example === undefined) continue;
          const validate = ajv.compile({ ...media.schema, $id: `check:${name}:${status}` });
          assert.ok(validate(media.example), `${name} ${status}: ${ajv.errorsText(validate.errors)}`);
          checked++;
        }
      }
    }
    assert.ok(checked >= EXAMPLES.length);
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
