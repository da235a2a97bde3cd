import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createEnv, type TestEnv } from './support/env.js';
import { get } from './support/http.js';

describe('OpenAPI documents the storage wire', () => {
  let env: TestEnv;
  before(async () => {
    env = await createEnv('sqlite');
  });
  after(() => env.close());

  it('lists the four routes with their refusals, and the document is valid OpenAPI', async () => {
    const r = await get(env.app, '/api/v1/openapi.json');
    assert.equal(r.status, 200);
    const paths = r.body.paths;
    const events = paths['/api/v1/storage/events'].post;
    assert.deepEqual(Object.keys(events.responses).sort(), [
      '200',
      '400',
      '401',
      '403',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
      '507',
    ]);
    // each event typed with the contract's fields, still checked one by one by the route
    const event = r.body.components.schemas.StorageEvent;
    assert.deepEqual(event.required, ['event_type', 'path', 'source', 'dedupe_key', 'detected_at']);
    assert.deepEqual(r.body.components.schemas.StorageEventsRequest.properties.events.items, {
      $ref: '#/components/schemas/StorageEvent',
    });
    const proxy = paths['/api/v1/storage/media-proxy'].post;
    assert.ok(proxy.requestBody.content['application/json']);
    const form = proxy.requestBody.content['multipart/form-data'].schema;
    assert.deepEqual(form.required, ['filespace', 'path', 'file']);
    assert.equal(form.properties.file.format, 'binary');
    assert.match(proxy.description, /multipart\/form-data/);
    assert.ok(['404', '413', '415'].every((c) => c in proxy.responses));
    assert.match(paths['/api/v1/storage/tasks'].get.description, /`read` and `write`/);
    assert.ok('404' in paths['/api/v1/storage/tasks/ack'].post.responses);
    const result = await new Validator().validate(r.body);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });
});
