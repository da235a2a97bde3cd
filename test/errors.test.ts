import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Type } from 'typebox';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { errors } from '../src/errors.js';

describe('the error handler', () => {
  let app: App;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'prodgraph-errors-'));
    app = await buildApp({
      config: loadConfig({ db: join(dir, 'e.db'), media: join(dir, 'media') }, {}),
      logger: false,
    });
    // routes that exist only to drive the handler from outside
    app.get('/api/v1/boom', { config: { auth: 'public' } }, async () => {
      throw new Error('select * from api_keys where hash = $1');
    });
    app.post(
      '/api/v1/echo',
      {
        config: { auth: 'public' },
        schema: {
          body: Type.Object(
            { label: Type.String({ minLength: 1 }), n: Type.Optional(Type.Integer()) },
            { additionalProperties: false },
          ),
        },
      },
      async (req) => req.body,
    );
    app.get('/api/v1/conflict', { config: { auth: 'public' } }, async () => {
      throw errors.conflict('already settled');
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers an unexpected failure 500 with no stack and no SQL', async () => {
    const r = await app.inject({ url: '/api/v1/boom' });
    assert.equal(r.statusCode, 500);
    assert.deepEqual(r.json(), { detail: 'internal server error' });
    assert.doesNotMatch(r.body, /select|api_keys|at /);
  });

  it('answers malformed JSON 400 and an empty JSON body 400', async () => {
    const bad = await app.inject({
      method: 'POST',
      url: '/api/v1/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"label": ',
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { detail: 'request body is not valid JSON' });
    const empty = await app.inject({
      method: 'POST',
      url: '/api/v1/echo',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(empty.statusCode, 400);
    assert.match(empty.json().detail, /empty/);
  });

  it('answers validation failures 422 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'label: is required'],
      [{ label: '' }, 'label: must NOT have fewer than 1 characters'],
      [{ label: 'x', n: 'many' }, 'n: must be integer'],
      [{ label: 'x', colour: 'red' }, 'colour: unknown field'],
    ];
    for (const [payload, detail] of cases) {
      const r = await app.inject({ method: 'POST', url: '/api/v1/echo', payload: payload as object });
      assert.equal(r.statusCode, 422, JSON.stringify(payload));
      assert.deepEqual(r.json(), { detail });
    }
  });

  it('answers catalogue errors with their status and a JSON detail body', async () => {
    const r = await app.inject({ url: '/api/v1/conflict' });
    assert.equal(r.statusCode, 409);
    assert.deepEqual(r.json(), { detail: 'already settled' });
    assert.match(String(r.headers['content-type']), /^application\/json/);
  });

  it('answers an unknown route 404 with a detail body, on every method', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const r = await app.inject({ method, url: '/api/v1/no/such/thing' });
      assert.equal(r.statusCode, 404);
      assert.deepEqual(r.json(), { detail: `no route for ${method} /api/v1/no/such/thing` });
    }
  });
});
