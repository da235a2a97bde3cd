import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Type } from 'typebox';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { refusalOf } from '../src/db/refusals.js';
import { DocumentError } from '../src/document/parse.js';
import { AppError, ERROR_CODES, errors, isAppError } from '../src/errors.js';
import { Id } from '../src/domain/schema-kit.js';
import { routesOf } from '../src/http/define-route.js';

/** One raw HTTP exchange, for what no HTTP client will send (a malformed request line or escape). */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(text);
  });
}

/** A driver's error for `code`, as the data layer throws it on (src/db/refusals.ts). */
function driverRefusal(code: string): unknown {
  const err = Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code });
  return refusalOf(err) ?? err;
}

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
    routesOf(app).get('/api/v1/boom', { config: { auth: 'public' } }, async () => {
      throw new Error('select * from api_keys where hash = $1');
    });
    routesOf(app).post(
      '/api/v1/echo',
      {
        config: { auth: 'public' },
        schema: {
          body: Type.Object(
            {
              label: Type.String({ minLength: 1 }),
              n: Type.Optional(Type.Integer({ maximum: 1000 })),
              tags: Type.Optional(Type.Array(Type.String())),
            },
            { additionalProperties: false },
          ),
        },
      },
      async (req) => req.body,
    );
    routesOf(app).get(
      '/api/v1/things/:id',
      {
        config: { auth: 'public' },
        schema: {
          params: Type.Object({ id: Id() }),
          querystring: Type.Object({
            limit: Type.Optional(Type.Integer({ minimum: 1 })),
            flag: Type.Optional(Type.Boolean()),
            tag: Type.Optional(Type.Array(Type.String())),
            q: Type.Optional(Type.String()),
          }),
        },
      },
      async (req) => ({ params: req.params, query: req.query }),
    );
    routesOf(app).post(
      '/api/v1/upload',
      {
        config: { auth: 'public' },
        schema: { consumes: ['multipart/form-data'] },
      },
      async () => ({ ok: true }),
    );
    routesOf(app).get('/api/v1/conflict', { config: { auth: 'public' } }, async () => {
      throw errors.conflict('already settled');
    });
    // a CLI refusal carries no status: reaching a route's answer, it is a bug like any other
    routesOf(app).get('/api/v1/cli-refusal', { config: { auth: 'public' } }, async () => {
      throw new DocumentError('episodes[0].code: is required');
    });
    // what the two drivers throw when a constraint refuses a write, as the data layer passes it on
    routesOf(app).get('/api/v1/db/:code', { config: { auth: 'public' } }, async (req) => {
      throw driverRefusal((req.params as { code: string }).code);
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (payload: string, contentType?: string) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/echo',
      headers: contentType ? { 'content-type': contentType } : {},
      payload,
    });

  it('answers an unexpected failure 500 with no stack and no SQL', async () => {
    const r = await app.inject({ url: '/api/v1/boom' });
    assert.equal(r.statusCode, 500);
    assert.deepEqual(r.json(), { detail: 'internal server error', code: 'internal' });
    assert.doesNotMatch(r.body, /select|api_keys|at /);
  });

  it('answers a user error without an HTTP status (a CLI refusal) 500, as any unexpected failure', async () => {
    const r = await app.inject({ url: '/api/v1/cli-refusal' });
    assert.equal(r.statusCode, 500);
    assert.deepEqual(r.json(), { detail: 'internal server error', code: 'internal' });
  });

  it('answers malformed JSON 400, a forbidden __proto__ key 400, and a missing body 422', async () => {
    const bad = await post('{"label": ', 'application/json');
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { detail: 'request body is not valid JSON', code: 'malformed_request' });
    const proto = await post('{"label": "x", "__proto__": {"admin": true}}', 'application/json');
    assert.equal(proto.statusCode, 400);
    assert.equal(proto.json().code, 'malformed_request');
    const empty = await post('', 'application/json');
    assert.equal(empty.statusCode, 400);
    assert.match(empty.json().detail, /empty/);
    const none = await app.inject({ method: 'POST', url: '/api/v1/echo' });
    assert.equal(none.statusCode, 422);
    assert.deepEqual(none.json(), {
      detail: 'body: is required (send application/json)',
      code: 'invalid_field',
      field: 'body',
    });
  });

  it('validates a JSON body as sent: no coercion, no silent removal, the text rule, naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'label: is required'],
      [{ label: '' }, 'label: must NOT have fewer than 1 characters'],
      [{ label: 42 }, 'label: must be a string'],
      [{ label: null }, 'label: must be a string'],
      [{ label: true }, 'label: must be a string'],
      [{ label: 'x', n: 'many' }, 'n: must be a whole number'],
      [{ label: 'x', n: '5' }, 'n: must be a whole number'],
      [{ label: 'x', n: 1.5 }, 'n: must be a whole number'],
      [{ label: 'x', n: 1e20 }, 'n: must be <= 1000'],
      [{ label: 'x', tags: 'one' }, 'tags: must be an array'],
      [{ label: 'x', tags: ['a', 7] }, 'tags[1]: must be a string'],
      [{ label: 'x', colour: 'red' }, 'colour: unknown field'],
      [{ label: 'a\u0000b' }, 'label: must not contain the control character U+0000'],
      [{ label: 'a\u001bb' }, 'label: must not contain the control character U+001B'],
      [{ label: 'a\u0085b' }, 'label: must not contain the control character U+0085'],
      [{ label: 'a\ud800b' }, 'label: is not valid Unicode (a lone surrogate U+D800)'],
      [{ label: 'x', tags: ['ok', '\udc00'] }, 'tags[1]: is not valid Unicode (a lone surrogate U+DC00)'],
      [[], 'body: must be an object'],
      ['x', 'body: must be an object'],
    ];
    for (const [payload, detail] of cases) {
      const r = await post(JSON.stringify(payload), 'application/json');
      assert.equal(r.statusCode, 422, JSON.stringify(payload));
      // `field` is what the detail starts with, so a client need not parse the detail
      const field = detail.slice(0, detail.indexOf(':'));
      assert.deepEqual(r.json(), { detail, code: 'invalid_field', field }, JSON.stringify(payload));
    }
    // free text keeps tabs, line breaks and every other character, astral ones included
    const text = 'line one\r\n\tline two — ✓ 🎬';
    const ok = await post(JSON.stringify({ label: text, n: 7 }), 'application/json');
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { label: text, n: 7 });
  });

  it('answers a Content-Type the route does not take 415, and a form without a boundary 400', async () => {
    const plain = await post('{"label":"x"}', 'text/plain');
    assert.equal(plain.statusCode, 415);
    assert.deepEqual(plain.json(), {
      detail: 'Content-Type "text/plain" is not accepted here; send application/json',
      code: 'unsupported_media_type',
    });
    const form = await post('--b\r\n', 'multipart/form-data; boundary=b');
    assert.equal(form.statusCode, 415);
    const odd = await post('x', 'application/x-www-form-urlencoded');
    assert.equal(odd.statusCode, 415);
    const json = await app.inject({
      method: 'POST',
      url: '/api/v1/upload',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(json.statusCode, 415);
    assert.match(json.json().detail, /send multipart\/form-data/);
    const unbounded = await app.inject({
      method: 'POST',
      url: '/api/v1/upload',
      headers: { 'content-type': 'multipart/form-data' },
      payload: 'x',
    });
    assert.equal(unbounded.statusCode, 400);
    assert.deepEqual(unbounded.json(), {
      detail: 'multipart/form-data needs a boundary parameter in its Content-Type',
      code: 'malformed_request',
    });
    const nothing = await app.inject({ method: 'POST', url: '/api/v1/upload' });
    assert.equal(nothing.statusCode, 422);
    assert.match(nothing.json().detail, /^body: is required/);
  });

  it('converts path and query parameters strictly', async () => {
    const ok = await app.inject({ url: '/api/v1/things/42?limit=7&flag=false&tag=a&q=x%20y' });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), {
      params: { id: 42 },
      query: { limit: 7, flag: false, tag: ['a'], q: 'x y' },
    });
    const both = await app.inject({ url: '/api/v1/things/1?tag=a&tag=b' });
    assert.deepEqual(both.json().query, { tag: ['a', 'b'] });

    const notIds = ['1.5', '1e3', '0x1A', '+1', '01', '-1', '0', 'Infinity', 'NaN', '%201', '1%20', 'abc'];
    for (const id of notIds) {
      const r = await app.inject({ url: `/api/v1/things/${id}` });
      assert.equal(r.statusCode, 422, id);
      assert.equal(r.json().code, 'invalid_field', id);
      assert.match(r.json().detail, /^id: must be/, id);
    }
    for (const id of ['2147483648', '9223372036854775808', '99999999999999999999']) {
      const r = await app.inject({ url: `/api/v1/things/${id}` });
      assert.deepEqual(
        r.json(),
        { detail: 'id: must be <= 2147483647', code: 'invalid_field', field: 'id' },
        id,
      );
    }
    const refused: Array<[string, string]> = [
      ['?limit=1e3', 'limit: must be a whole number written in plain decimal digits'],
      ['?flag=1', 'flag: must be true or false'],
      ['?limit=1&limit=2', 'limit: given more than once; this parameter takes one value'],
      ['?sort=label', 'sort: unknown query parameter (this endpoint takes limit, flag, tag, q)'],
      ['?__proto__=x', '__proto__: unknown query parameter (this endpoint takes limit, flag, tag, q)'],
      ['?constructor=x', 'constructor: unknown query parameter (this endpoint takes limit, flag, tag, q)'],
      ['?a%2Fb=x', 'a/b: unknown query parameter (this endpoint takes limit, flag, tag, q)'],
      ['?q=a%00b', 'q: must not contain the control character U+0000'],
      ['?q=a%0Ab', 'q: must not contain the control character U+000A'],
      ['?tag=a&tag=%01', 'tag[1]: must not contain the control character U+0001'],
    ];
    for (const [query, detail] of refused) {
      const r = await app.inject({ url: `/api/v1/things/1${query}` });
      assert.equal(r.statusCode, 422, query);
      const field = detail.slice(0, detail.indexOf(': '));
      assert.deepEqual(r.json(), { detail, code: 'invalid_field', field }, query);
    }
    const none = await app.inject({ url: '/api/v1/conflict?debug=1' });
    assert.deepEqual(none.json(), {
      detail: 'debug: unknown query parameter (this endpoint takes none)',
      code: 'invalid_field',
      field: 'debug',
    });
  });

  it('answers catalogue errors with their status, code and a JSON detail body', async () => {
    const r = await app.inject({ url: '/api/v1/conflict' });
    assert.equal(r.statusCode, 409);
    assert.deepEqual(r.json(), { detail: 'already settled', code: 'conflict' });
    assert.match(String(r.headers['content-type']), /^application\/json/);
  });

  it('maps a database refusal a request can provoke to 409 or 422, never 500, and says no more', async () => {
    // the data layer keeps the driver's error as the cause (logged, never answered)
    const mapped = driverRefusal('23505');
    assert.ok(isAppError(mapped));
    assert.equal((mapped.cause as { code: string }).code, '23505');
    assert.equal(driverRefusal('42P01') instanceof AppError, false, 'anything else is left as it is');
    const cases: Array<[string, number, string]> = [
      ['23505', 409, 'conflict'],
      ['SQLITE_CONSTRAINT_UNIQUE', 409, 'conflict'],
      ['23503', 409, 'conflict'],
      ['SQLITE_CONSTRAINT_FOREIGNKEY', 409, 'conflict'],
      ['22003', 422, 'invalid_field'],
      ['22021', 422, 'invalid_field'],
      ['54000', 422, 'invalid_field'],
      ['SQLITE_TOOBIG', 422, 'invalid_field'],
      ['42P01', 500, 'internal'],
    ];
    for (const [code, status, name] of cases) {
      const r = await app.inject({ url: `/api/v1/db/${code}` });
      assert.equal(r.statusCode, status, code);
      assert.equal(r.json().code, name, code);
      // which value could not be stored is not known here: the whole request is named
      assert.equal(r.json().field, status === 422 ? 'request' : undefined, code);
      assert.doesNotMatch(r.body, /constraint|duplicate/, code);
    }
  });

  it('answers a body over the limit 413', async () => {
    const big = await post(JSON.stringify({ label: 'x'.repeat(2 * 1024 * 1024) }), 'application/json');
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().code, 'too_large');
  });

  it('answers an unknown route 404 with a detail body, on every method', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const r = await app.inject({ method, url: '/api/v1/no/such/thing' });
      assert.equal(r.statusCode, 404);
      assert.deepEqual(r.json(), {
        detail: `no route for ${method} /api/v1/no/such/thing`,
        code: 'route_not_found',
      });
    }
  });

  it('answers a wrong method on a known path 405 with Allow; an unknown path stays 404', async () => {
    const cases: Array<[string, string, string]> = [
      ['PUT', '/api/v1/production', 'GET, HEAD'],
      ['DELETE', '/api/v1/production?x=1', 'GET, HEAD'],
      ['PATCH', '/api/v1/assets/12', 'GET, HEAD'],
      ['GET', '/api/v1/assets/12/notes', 'POST'],
      ['PUT', '/api/v1/assets', 'GET, HEAD, POST'],
      ['POST', '/api/v1/production/', 'GET, HEAD'],
      // GET and DELETE /mcp exist only to answer 405 themselves
      ['PUT', '/mcp', 'POST'],
    ];
    for (const [method, url, allow] of cases) {
      const r = await app.inject({ method: method as 'PUT', url });
      const path = url.split('?')[0];
      assert.equal(r.statusCode, 405, `${method} ${url}`);
      assert.equal(r.headers.allow, allow, `${method} ${url}`);
      assert.deepEqual(r.json(), {
        detail: `${method} is not allowed on ${path}; it takes ${allow}`,
        code: 'method_not_allowed',
      });
    }
    for (const [method, url] of [
      ['PUT', '/api/v1/productions'],
      ['GET', '/api/v1/assets/12/notes/3'],
      ['DELETE', '/api/v1'],
    ] as const) {
      const r = await app.inject({ method, url });
      assert.equal(r.statusCode, 404, `${method} ${url}`);
      assert.equal(r.json().code, 'route_not_found', `${method} ${url}`);
      assert.equal(r.headers.allow, undefined);
    }
  });

  it('answers a malformed URL or HTTP request with the catalogue body, over a real socket', async () => {
    const { port } = app.server.address() as { port: number };
    for (const path of ['/api/v1/things/%ZZ', '/api/v1/things/%E2%82', '/api/v1/things/%C0%AF']) {
      const reply = await raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.match(reply, /^HTTP\/1\.1 400 /, path);
      const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
      assert.equal(body.code, 'malformed_request', path);
      assert.match(body.detail, /URL is not valid/, path);
    }
    const long = await app.inject({ url: `/api/v1/things/${'1'.repeat(600)}` });
    assert.equal(long.statusCode, 422);
    assert.equal(long.json().code, 'invalid_field');
    assert.equal(long.json().field, 'path');
    for (const request of [
      'GET /api/v1/conflict HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'GET /api/v1/conflict HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\u0000b\r\n\r\n',
    ]) {
      const reply = await raw(port, request);
      assert.match(reply, /^HTTP\/1\.1 400 /);
      assert.deepEqual(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)), {
        detail: 'the HTTP request is malformed',
        code: 'malformed_request',
      });
    }
  });

  it('lists every code in the OpenAPI document', async () => {
    const doc = app.swagger() as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const code = doc.components.schemas.ErrorBody!.properties.code as { enum: string[]; description: string };
    assert.deepEqual(code.enum, Object.keys(ERROR_CODES));
    for (const c of code.enum) assert.ok(code.description.includes(`\`${c}\``), c);
  });

  it("the README's error-code table lists exactly the server's codes, each with its status", async () => {
    const readme = await readFile(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Error codes'));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| code |')));
    const rows = [...table.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    const served = Object.entries(ERROR_CODES).map(([c, meaning]) => [
      c,
      Number(/\((\d{3})\)$/.exec(meaning)![1]),
    ]);
    assert.deepEqual(
      [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [...served].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    // and no row the pattern above failed to read
    assert.equal(table.split('\n').filter((l) => l.startsWith('| `')).length, rows.length);
  });
});
