import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, createEnv, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { snapshotter, type Snapshot } from './support/fuzz/state.js';
import { jpeg } from './support/write.js';
import { depthOver } from '../src/http/json-body.js';

/*
 * The classes of hostile input issue 11 lists, each sent as raw HTTP to a server listening on a
 * real port (port 0), on each database: the answer, its code, and that nothing was written.
 */

interface Sent {
  status: number;
  body: { detail?: string; code?: string; [k: string]: unknown };
}

function rawRequest(port: number, head: string, body: Buffer = Buffer.alloc(0)): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const payload = text.slice(text.indexOf('\r\n\r\n') + 4);
      resolve({ status, body: payload ? JSON.parse(payload) : {} });
    });
    // write, not end: a half-closed socket may lose a slow answer (Node ends the connection)
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  });
}

const J = 'application/json';
const multipart = (parts: Array<{ name: string; value: string | Buffer; filename?: string }>, close = true) =>
  Buffer.concat([
    ...parts.flatMap((p) => [
      Buffer.from(
        `--BND\r\nContent-Disposition: form-data; name="${p.name}"` +
          (p.filename !== undefined ? `; filename="${p.filename}"\r\nContent-Type: image/jpeg` : '') +
          '\r\n\r\n',
      ),
      Buffer.from(p.value),
      Buffer.from('\r\n'),
    ]),
    Buffer.from(close ? '--BND--\r\n' : ''),
  ]);
const FORM = 'multipart/form-data; boundary=BND';

for (const dialect of DIALECTS) {
  describe(`hostile input over a real port [${dialect}]`, () => {
    let env: TestEnv;
    let port: number;
    let token: string;
    let vendor: string;
    let refs: Record<string, number>;
    let image: Buffer;
    let snapshot: () => Promise<Snapshot>;

    before(async () => {
      env = await createEnv(dialect);
      ({ refs } = await env.import(smallProduction('hostile')));
      token = await env.mint({ production: 'hostile', scopes: ['read', 'write', 'submit:turnover'] });
      vendor = await env.mint({
        production: 'hostile',
        scopes: ['read', 'submit:turnover'],
        engagement: 'eng-pix',
      });
      image = await jpeg(5);
      snapshot = await snapshotter(env);
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      port = (env.app.server.address() as { port: number }).port;
    });
    after(() => env.close());

    const send = (
      method: string,
      path: string,
      opts: { body?: string | Buffer; type?: string; headers?: Record<string, string>; key?: string } = {},
    ) => {
      const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
      let head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${opts.key ?? token}\r\n`;
      if (opts.type) head += `Content-Type: ${opts.type}\r\n`;
      for (const [k, v] of Object.entries(opts.headers ?? {})) head += `${k}: ${v}\r\n`;
      if (body) head += `Content-Length: ${body.length}\r\n`;
      return rawRequest(port, `${head}\r\n`, body);
    };

    /** [what, request, status, code, detail pattern] */
    type Case = [string, () => Promise<Sent>, number, string, RegExp];
    const cases = (): Case[] => {
      const asset = refs['ch-mara']!;
      return [
        // type coercion: a JSON body is validated as sent
        [
          'label 42',
          () => send('POST', '/api/v1/assets', { type: J, body: '{"label":42}' }),
          422,
          'invalid_field',
          /^label: must be a string/,
        ],
        [
          'label null',
          () => send('POST', '/api/v1/assets', { type: J, body: '{"label":null}' }),
          422,
          'invalid_field',
          /^label: must be a string/,
        ],
        [
          'note text 5',
          () => send('POST', `/api/v1/assets/${asset}/notes`, { type: J, body: '{"text":5}' }),
          422,
          'invalid_field',
          /^text: must be a string/,
        ],
        [
          'events not an array',
          () =>
            send('POST', '/api/v1/storage/events', {
              type: J,
              body: '{"filespace":"hostile-fs","events":{"0":{}}}',
            }),
          422,
          'invalid_field',
          /^events: must be an array/,
        ],
        [
          'ack task_id "1"',
          () => send('POST', '/api/v1/storage/tasks/ack', { type: J, body: '{"task_id":"1","ok":true}' }),
          422,
          'invalid_field',
          /^task_id: must be a whole number/,
        ],
        // strict ids in paths and query strings
        ...['1.5', '1e3', '0x1A', '+1', '01', 'Infinity', 'NaN', '-1', '%201'].map((id): Case => [
          `asset id ${id}`,
          () => send('GET', `/api/v1/assets/${id}`),
          422,
          'invalid_field',
          /^node_id: must be/,
        ]),
        ...['99999999999999999999', '9223372036854775808', '2147483648'].map((id): Case => [
          `asset id ${id}`,
          () => send('GET', `/api/v1/assets/${id}`),
          422,
          'invalid_field',
          /^node_id: must be <= 2147483647/,
        ]),
        [
          'notes on id 2^63',
          () => send('POST', '/api/v1/assets/9223372036854775808/notes', { type: J, body: '{"text":"x"}' }),
          422,
          'invalid_field',
          /^node_id/,
        ],
        [
          'decide id 1e20',
          () =>
            send('POST', '/api/v1/approvals/99999999999999999999/decide', {
              type: J,
              body: '{"decision":"approved"}',
            }),
          422,
          'invalid_field',
          /^approval_id/,
        ],
        [
          'bundle id 2^31',
          () => send('GET', '/api/v1/bundles/scene/2147483648'),
          422,
          'invalid_field',
          /^node_id/,
        ],
        [
          'limit 1e3',
          () => send('GET', '/api/v1/activity?limit=1e3'),
          422,
          'invalid_field',
          /^limit: must be a whole number/,
        ],
        [
          'episode_id 2^63',
          () => send('GET', '/api/v1/schedule?episode_id=9223372036854775808'),
          422,
          'invalid_field',
          /^episode_id\[0\]: must be <= 2147483647/,
        ],
        // NUL and other control characters, everywhere a string comes in
        [
          'NUL in a JSON field',
          () => send('POST', '/api/v1/assets', { type: J, body: '{"label":"a\\u0000b"}' }),
          422,
          'invalid_field',
          /^label: must not contain the control character U\+0000/,
        ],
        [
          'lone surrogate in a JSON field',
          () => send('POST', '/api/v1/assets', { type: J, body: '{"label":"a\\ud800b"}' }),
          422,
          'invalid_field',
          /^label: is not valid Unicode/,
        ],
        [
          'NUL in a path',
          () => send('GET', '/api/v1/departments/a%00b'),
          422,
          'invalid_field',
          /^slug: must not contain the control character U\+0000/,
        ],
        [
          'NUL in a query',
          () => send('GET', '/api/v1/assets?department=a%00b'),
          422,
          'invalid_field',
          /^department: must not contain/,
        ],
        [
          'NUL in kind',
          () => send('GET', '/api/v1/assets?kind=a%00b'),
          422,
          'invalid_field',
          /^kind: must not contain/,
        ],
        [
          'NUL in a form field',
          () =>
            send('POST', `/api/v1/assets/${asset}/versions`, {
              type: FORM,
              body: multipart([
                { name: 'note', value: 'a\u0000b' },
                { name: 'file', filename: 'a.jpg', value: image },
              ]),
            }),
          422,
          'invalid_field',
          /^note: must not contain the control character U\+0000/,
        ],
        [
          'NUL in a filename',
          () =>
            send('POST', `/api/v1/assets/${asset}/versions`, {
              type: FORM,
              body: multipart([{ name: 'file', filename: 'a\u0000.jpg', value: image }]),
            }),
          422,
          'invalid_field',
          /^file: the filename must not contain/,
        ],
        [
          // Node's HTTP parser refuses the request before the app sees it; the answer is still ours
          'a control character in the Idempotency-Key',
          () =>
            send('POST', '/api/v1/assets', {
              type: J,
              body: '{"label":"x"}',
              headers: { 'Idempotency-Key': 'a%00b\u0001' },
            }),
          400,
          'malformed_request',
          /HTTP request is malformed/,
        ],
        [
          'NUL in a media ticket (a forged ticket: 401, never 422)',
          () => send('GET', '/media/ab/c.jpg?t=a%00b'),
          401,
          'unauthorized',
          /media ticket/,
        ],
        // malformed percent-encoding
        ['%ZZ', () => send('GET', '/api/v1/assets/%ZZ'), 400, 'malformed_request', /URL is not valid/],
        [
          'truncated UTF-8',
          () => send('GET', '/api/v1/assets/%E2%82'),
          400,
          'malformed_request',
          /URL is not valid/,
        ],
        [
          'overlong UTF-8',
          () => send('GET', '/api/v1/assets/%C0%AF'),
          400,
          'malformed_request',
          /URL is not valid/,
        ],
        // the media proxy's bodies
        [
          'media-proxy text/plain',
          () => send('POST', '/api/v1/storage/media-proxy', { type: 'text/plain', body: 'hello' }),
          415,
          'unsupported_media_type',
          /send application\/json or multipart\/form-data/,
        ],
        [
          'media-proxy no body',
          () => send('POST', '/api/v1/storage/media-proxy'),
          422,
          'invalid_field',
          /^body: is required/,
        ],
        [
          'media-proxy form without boundary',
          () => send('POST', '/api/v1/storage/media-proxy', { type: 'multipart/form-data', body: 'x' }),
          400,
          'malformed_request',
          /boundary/,
        ],
        [
          'media-proxy form cut short',
          () =>
            send('POST', '/api/v1/storage/media-proxy', {
              type: FORM,
              body: multipart([{ name: 'filespace', value: 'hostile-fs' }], false),
            }),
          400,
          'malformed_request',
          /multipart/,
        ],
        [
          'thousands of file parts',
          () =>
            send('POST', `/api/v1/turnovers/${refs['dl-plates']}/submissions`, {
              type: FORM,
              key: vendor,
              body: multipart(
                Array.from({ length: 3000 }, (_, n) => ({
                  name: 'files',
                  filename: `${n}.jpg`,
                  value: image,
                })),
              ),
            }),
          413,
          'too_large',
          /^files: at most 50 files/,
        ],
        // misleading or missing refusals
        [
          'JSON sent as text/plain',
          () => send('POST', '/api/v1/assets', { type: 'text/plain', body: '{"label":"x"}' }),
          415,
          'unsupported_media_type',
          /text\/plain/,
        ],
        [
          'JSON sent to the submission route',
          () =>
            send('POST', `/api/v1/turnovers/${refs['dl-plates']}/submissions`, {
              type: J,
              body: '{"title":"x"}',
              key: vendor,
            }),
          415,
          'unsupported_media_type',
          /multipart\/form-data/,
        ],
        [
          '0-byte version',
          () =>
            send('POST', `/api/v1/assets/${asset}/versions`, {
              type: FORM,
              body: multipart([{ name: 'file', filename: 'a.jpg', value: '' }]),
            }),
          422,
          'invalid_field',
          /^file: is empty/,
        ],
        [
          'text file as a version',
          () =>
            send('POST', `/api/v1/assets/${asset}/versions`, {
              type: FORM,
              body: multipart([{ name: 'file', filename: 'a.jpg', value: 'hello, world' }]),
            }),
          415,
          'unsupported_media_type',
          /^file: .*image or a video/,
        ],
        [
          'version form cut short',
          () =>
            send('POST', `/api/v1/assets/${asset}/versions`, {
              type: FORM,
              body: multipart(
                [
                  { name: 'file', filename: 'a.jpg', value: image },
                  { name: 'note', value: 'x' },
                ],
                false,
              ),
            }),
          400,
          'malformed_request',
          /multipart/,
        ],
        [
          '?sort=',
          () => send('GET', '/api/v1/assets?sort=label'),
          422,
          'invalid_field',
          /^sort: unknown query parameter/,
        ],
        [
          '?q=',
          () => send('GET', '/api/v1/production?q=x'),
          422,
          'invalid_field',
          /^q: unknown query parameter \(this endpoint takes none\)/,
        ],
        [
          'repeated status',
          () => send('GET', '/api/v1/assets?status=planned&status=active'),
          422,
          'invalid_field',
          /^status: given more than once/,
        ],
        [
          'unknown JSON field',
          () =>
            send('POST', '/api/v1/storage/tasks/ack', {
              type: J,
              body: '{"task_id":1,"ok":true,"force":true}',
            }),
          422,
          'invalid_field',
          /^force: unknown field/,
        ],
      ];
    };

    it('answers every listed class with its status, a code and a detail naming the problem, writing nothing', async () => {
      for (const [what, request, status, code, detail] of cases()) {
        const before = await snapshot();
        const r = await request();
        assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
        if (status >= 400) {
          assert.equal(r.body.code, code, what);
          assert.match(String(r.body.detail), detail, what);
          assert.deepEqual(await snapshot(), before, `${what} wrote something`);
        }
      }
    });

    it('a JSON body nested deeper than 64 levels is 400 in milliseconds on every JSON route, /mcp included, memory flat', async () => {
      // 8 MB of brackets: parsed, it would be four million nested arrays (seconds, hundreds of MB)
      const bomb = (bytes: number) => '['.repeat(bytes / 2) + ']'.repeat(bytes / 2);
      const big = bomb(8 * 1024 * 1024);
      // within the 1 MiB body limit of the other routes
      const small = bomb(1000 * 1000);
      const routes: Array<[string, string, string, string]> = [
        ['/mcp', vendor, 'vendor key, read only', big],
        ['/api/v1/storage/events', token, 'storage agent', big],
        ['/api/v1/assets', token, 'asset create', small],
        [`/api/v1/assets/${refs['ch-mara']}/notes`, token, 'note', small],
      ];
      const before = await snapshot();
      const rss = process.memoryUsage().rss;
      for (const [path, key, what, body] of routes) {
        const started = performance.now();
        const r = await send('POST', path, {
          key,
          type: J,
          body,
          headers: { accept: 'application/json, text/event-stream' },
        });
        const ms = performance.now() - started;
        assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'malformed_request', what);
        assert.match(String(r.body.detail), /nests arrays and objects deeper than 64 levels/, what);
        assert.ok(ms < 1500, `${what}: answered in ${Math.round(ms)} ms`);
      }
      const grew = (process.memoryUsage().rss - rss) / 1048576;
      assert.ok(grew < 150, `RSS grew ${Math.round(grew)} MiB`);
      assert.deepEqual(await snapshot(), before, 'a refused body wrote something');

      // 64 levels are read (and judged by the schema); brackets inside strings do not count
      const deep = `{"label":"x","tags":${'['.repeat(63)}${']'.repeat(63)}}`;
      const atLimit = await send('POST', '/api/v1/assets', { type: J, body: deep });
      assert.equal(atLimit.status, 422, JSON.stringify(atLimit.body));
      const text = JSON.stringify({ text: `[{"\\"${'['.repeat(5000)}` });
      const note = await send('POST', `/api/v1/assets/${refs['ch-mara']}/notes`, { type: J, body: text });
      assert.equal(note.status, 201, JSON.stringify(note.body));
      // a bad JSON-RPC body that is shallow is still JSON-RPC's own -32700
      const rpc = await send('POST', '/mcp', {
        key: vendor,
        type: J,
        body: '{"jsonrpc":',
        headers: { accept: J },
      });
      assert.equal(rpc.status, 200);
      assert.equal((rpc.body as { error?: { code?: number } }).error?.code, -32700);
    });

    it('the depth scan counts brackets outside strings only, escapes included', () => {
      assert.equal(depthOver('[[1]]', 1), 2);
      assert.equal(depthOver('[[1]]', 2), 0);
      assert.equal(depthOver('["[[[[", 1]', 1), 0);
      assert.equal(depthOver('["\\"[[[[", 1]', 1), 0);
      assert.equal(depthOver('["\\\\", [[1]]]', 2), 3);
      assert.equal(depthOver('{"a":{"b":"}}}}{{{{"}}', 2), 0);
      assert.equal(depthOver('"unterminated [[[[', 1), 0);
    });

    it('refuses a NUL in a storage event on its own, and stores the valid ones as sent', async () => {
      const r = await send('POST', '/api/v1/storage/events', {
        type: J,
        body: JSON.stringify({
          filespace: 'hostile-fs',
          events: [
            {
              event_type: 'create',
              path: 'a/ok.exr',
              source: 'scan',
              dedupe_key: 'ok-1',
              detected_at: '2026-01-01T00:00:00Z',
            },
            {
              event_type: 'create',
              path: 'a/b.exr',
              source: 'scan',
              dedupe_key: 'k\u00001',
              detected_at: '2026-01-01T00:00:00Z',
            },
            {
              event_type: 'create',
              path: 'a/\u0007.exr',
              source: 'scan',
              dedupe_key: 'k2',
              detected_at: '2026-01-01T00:00:00Z',
            },
          ],
        }),
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.accepted, 1);
      assert.deepEqual(
        (r.body.refused as Array<{ index: number; reason: string }>).map((x) => [x.index, x.reason]),
        [
          [1, 'dedupe_key: must not contain the control character U+0000'],
          [2, 'path: must not contain the control character U+0007'],
        ],
      );
    });

    it('keeps free text as sent: tabs, line breaks, astral characters', async () => {
      const label = 'Coat\tv2 — wet hem 🎬\r\nsecond line';
      const r = await send('POST', '/api/v1/assets', { type: J, body: JSON.stringify({ label }) });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const back = await send('GET', `/api/v1/assets/${r.body.node_id as number}`);
      assert.equal(back.body.label, label);
    });
  });
}
