import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createEnv, type TestEnv } from './support/env.js';
import { multipart } from './support/multipart.js';
import { ALL_SCOPES, importRoundTrip, type Refs } from './support/round-trip.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * What the OpenAPI document says of bodies, files and versions is what the server does: the
 * parts an upload requires, which bodies may be left out, the refusals of every route that
 * takes a body, the type of a file's bytes, and the version it serves. (Prism checks every
 * answer against the document in openapi-prism.test.ts; this holds the statements generators
 * read to type a client.)
 */

const PACKAGE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('the OpenAPI document says what the server takes and answers', () => {
  let env: TestEnv;
  let refs: Refs;
  let doc: any;
  let key: string;
  before(async () => {
    env = await createEnv('sqlite');
    refs = await importRoundTrip(env, 'film');
    key = await env.mint({ production: 'film', scopes: ALL_SCOPES });
    doc = JSON.parse((await env.app.inject({ url: '/api/v1/openapi.json' })).body);
  });
  after(() => env.close());

  const op = (method: string, path: string) => doc.paths[path][method];
  const form = (method: string, path: string) =>
    op(method, path).requestBody.content['multipart/form-data'].schema;

  it('the uploads require their files, and the server still refuses a form without one (422)', async () => {
    assert.deepEqual(form('post', '/api/v1/assets/{node_id}/versions').required, ['file']);
    assert.deepEqual(form('post', '/api/v1/turnovers/{id}/submissions').required, ['files']);
    assert.equal(form('post', '/api/v1/turnovers/{id}/submissions').properties.files.minItems, 1);
    const noFile = multipart([{ name: 'note', value: 'no file here' }]);
    const res = await env.app.inject({
      method: 'POST',
      url: `/api/v1/assets/${refs['co-coat']}/versions`,
      headers: { authorization: `Bearer ${key}`, ...noFile.headers },
      payload: noFile.payload,
    });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().field, 'file');
  });

  it('a body that may be left out is not required; every other body is', async () => {
    const token = op('post', '/api/v1/vision/session-token').requestBody;
    assert.equal(token.required, false);
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, o] of Object.entries<any>(item)) {
        if (!o.requestBody || path === '/api/v1/vision/session-token') continue;
        assert.equal(o.requestBody.required, true, `${method} ${path}`);
      }
    }
  });

  it('every operation that takes a body documents 415 and 400; the media proxy takes a form too', async () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, o] of Object.entries<any>(item)) {
        if (!o.requestBody) continue;
        assert.ok(o.responses['415'], `${method} ${path}: 415`);
        assert.ok(o.responses['400'], `${method} ${path}: 400`);
      }
    }
    const proxy = op('post', '/api/v1/storage/media-proxy').requestBody.content;
    assert.deepEqual(Object.keys(proxy).sort(), ['application/json', 'multipart/form-data']);
    // and the JSON routes do answer it
    const res = await env.app.inject({
      method: 'POST',
      url: `/api/v1/assets/${refs['co-coat']}/notes`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
      payload: 'label',
    });
    assert.equal(res.statusCode, 415);
  });

  it("a file's bytes are typed as the file's own type, and a bundle's versions as released", () => {
    for (const path of [
      '/api/v1/media/{id}/content',
      '/media/{path}',
      '/api/v1/admin/engagements/{id}/view/media/{media_id}/content',
    ]) {
      for (const status of ['200', '206']) {
        assert.deepEqual(
          Object.keys(op('get', path).responses[status].content),
          ['*/*'],
          `${path} ${status}`,
        );
      }
    }
    // pinned: `const: true`, which the generator writes as the one-value enum
    const released = doc.components.schemas.VersionSummary.properties.released;
    assert.deepEqual(released.const ?? released.enum, released.const === undefined ? [true] : true);
  });

  it("states the package's version, on /docs too", async () => {
    assert.equal(doc.info.version, PACKAGE.version);
    const page = await env.app.inject({ url: '/docs/json' });
    assert.equal(JSON.parse(page.body).info.version, PACKAGE.version);
  });
});
