import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createEnv, type TestEnv } from './support/env.js';

describe('round-trip routes in the OpenAPI document', () => {
  let env: TestEnv;
  before(async () => {
    env = await createEnv('sqlite');
  });
  after(() => env.close());

  it('documents all eight endpoints, the multipart form and their refusals; the document is valid', async () => {
    const r = await env.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    const doc = JSON.parse(r.body);
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    const ops: Array<[string, string, string[]]> = [
      ['/api/v1/bundles/scene/{node_id}', 'get', ['200', '304', '401', '403', '404']],
      ['/api/v1/bundles/character/{node_id}', 'get', ['200', '304', '401', '403', '404']],
      ['/api/v1/turnovers', 'get', ['200', '401', '403']],
      ['/api/v1/submissions', 'get', ['200', '401', '403', '422']],
      ['/api/v1/turnovers/{id}/submissions', 'post', ['200', '401', '403', '404', '413', '422']],
      ['/api/v1/media/{id}', 'get', ['200', '401', '403', '404']],
      ['/api/v1/media/{id}/content', 'get', ['200', '206', '401', '403', '404', '416']],
      ['/api/v1/purchase-orders', 'get', ['200', '401', '403']],
    ];
    for (const [path, method, codes] of ops) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path}`);
      for (const c of codes) assert.ok(op.responses[c], `${method} ${path} documents ${c}`);
      assert.match(op.description, /Round-trip surface/);
    }
    const form =
      doc.paths['/api/v1/turnovers/{id}/submissions'].post.requestBody.content['multipart/form-data'];
    assert.deepEqual(Object.keys(form.schema.properties), ['files', 'title', 'note']);
  });
});
