import assert from 'node:assert/strict';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import type { MediaStore } from '../src/media/store.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { head, RawConnection, serverSockets } from './support/raw-http.js';
import { jpeg, storedFiles } from './support/write.js';

/*
 * An upload over its limit is refused before it is read: on a declared Content-Length at once,
 * a chunked form the moment it passes the limit, a file the moment it passes the file limit;
 * nothing past the limit is staged; the client reads the 413 (not a reset) and the connection
 * is closed gently. Every upload route, over a real port, on each database, with small limits.
 */

const FILE_LIMIT = 1024 * 1024;
const GiB = 1024 ** 3;
/** Far more than any limit here: what a client would send if nobody stopped it. */
const FLOOD = 256 * 1024 * 1024;
/** What the server may read of a refused body: the limit, the bytes in flight when it answered, and the linger. */
const READ_BOUND = 64 * 1024 * 1024;

interface Route {
  name: string;
  path: string;
  key: () => string;
  /** The form's file field, or null for a JSON body. */
  field: string | null;
  /** The largest body the route takes. */
  maxBytes: number;
}

/** A store that notes the most bytes any one file staged reached. */
function measuringStore(inner: MediaStore): MediaStore & { largest: number } {
  const store = Object.create(inner) as MediaStore & { largest: number };
  store.largest = 0;
  store.stage = (productionId, source, options) => {
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, done) {
        store.largest = Math.max(store.largest, (size += chunk.length));
        done(null, chunk);
      },
    });
    // the store reports the failure; the copy's own end of it is not a second one
    pipeline(source, counted).catch(() => undefined);
    return inner.stage(productionId, counted, options);
  };
  return store;
}

const BOUNDARY = 'uplimits7c1d';
const formHead = (field: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;

for (const dialect of DIALECTS) {
  describe(`uploads over the limit are refused before they are read [${dialect}]`, () => {
    let env: TestEnv;
    let store: MediaStore & { largest: number };
    let port: number;
    let sockets: ReturnType<typeof serverSockets>;
    let wide: string;
    let vendor: string;
    let routes: Route[];

    before(async () => {
      env = await createEnv(
        dialect,
        {
          PRODGRAPH_MAX_UPLOAD_BYTES: String(FILE_LIMIT),
          PRODGRAPH_MAX_SUBMISSION_FILES: '2',
          PRODGRAPH_MAX_MCP_BODY_BYTES: String(2 * FILE_LIMIT),
        },
        { wrapStore: (s) => (store = measuringStore(s)) },
      );
      const { refs } = await env.import(smallProduction('uplim'));
      wide = await env.mint({ production: 'uplim', scopes: ['read', 'write'] });
      vendor = await env.mint({
        production: 'uplim',
        engagement: 'eng-pix',
        scopes: ['read', 'submit:turnover'],
      });
      const delivery = await env.handle.db
        .selectFrom('deliveries')
        .where('ref', '=', 'dl-plates')
        .select('id')
        .executeTakeFirstOrThrow();
      const room = 1024 * 1024;
      routes = [
        {
          name: 'POST /assets/{id}/versions',
          path: `/api/v1/assets/${refs['co-coat']}/versions`,
          key: () => wide,
          field: 'file',
          maxBytes: FILE_LIMIT + room,
        },
        {
          name: 'POST /turnovers/{id}/submissions',
          path: `/api/v1/turnovers/${delivery.id}/submissions`,
          key: () => vendor,
          field: 'files',
          maxBytes: 2 * FILE_LIMIT + room,
        },
        {
          name: 'POST /storage/media-proxy (form)',
          path: '/api/v1/storage/media-proxy',
          key: () => wide,
          field: 'file',
          maxBytes: Math.ceil((8 * 1024 * 1024) / 3) * 4 + 64 * 1024,
        },
        {
          name: 'POST /storage/media-proxy (JSON)',
          path: '/api/v1/storage/media-proxy',
          key: () => wide,
          field: null,
          maxBytes: Math.ceil((8 * 1024 * 1024) / 3) * 4 + 64 * 1024,
        },
        { name: 'POST /mcp', path: '/mcp', key: () => vendor, field: null, maxBytes: 2 * FILE_LIMIT },
      ];
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      port = (env.app.server.address() as { port: number }).port;
      sockets = serverSockets(env.app.server);
    });
    after(() => env.close());

    const contentType = (r: Route) =>
      r.field ? `multipart/form-data; boundary=${BOUNDARY}` : 'application/json';
    const bodyStart = (r: Route) =>
      r.field ? formHead(r.field) : '{"jsonrpc":"2.0","id":1,"method":"x","params":{"bytes":"';

    /** Nothing staged or stored, no media row: the refusal left no trace. */
    async function assertNothingKept(files: string[], media: number) {
      assert.deepEqual(await storedFiles(env.config.mediaDir), files, 'a staged or stored file was left');
      const rows = await env.handle.db.selectFrom('media').select('id').execute();
      assert.equal(rows.length, media, 'a media row was left');
    }
    const mediaCount = async () => (await env.handle.db.selectFrom('media').select('id').execute()).length;

    it('a body declared larger than the route takes is refused with 413 at once, before a byte of it is sent, and the connection closed', async () => {
      for (const r of routes) {
        const [files, media] = [await storedFiles(env.config.mediaDir), await mediaCount()];
        const conn = await RawConnection.open(port);
        conn.write(
          head('POST', r.path, {
            Authorization: `Bearer ${r.key()}`,
            'Content-Type': contentType(r),
            'Content-Length': GiB,
          }),
        );
        const answer = await conn.answer(5000);
        assert.equal(answer.status, 413, `${r.name}: ${answer.body}`);
        const body = JSON.parse(answer.body) as { detail: string; code: string };
        assert.equal(body.code, 'too_large', r.name);
        assert.match(body.detail, new RegExp(`${GiB} bytes.*at most ${r.maxBytes} bytes`), r.name);
        assert.equal(answer.headers.connection, 'close', `${r.name}: the connection is not kept`);
        assert.equal(await conn.closedWithin(), 'end', `${r.name}: closed with a FIN, not a reset`);
        await assertNothingKept(files, media);
      }
    });

    it('a client still sending a declared body reads the 413, not a reset; the server reads little of it', async () => {
      for (const r of routes) {
        const conn = await RawConnection.open(port);
        conn.write(
          head('POST', r.path, {
            Authorization: `Bearer ${r.key()}`,
            'Content-Type': contentType(r),
            'Content-Length': GiB,
          }) + bodyStart(r),
        );
        await conn.stream(FLOOD);
        const answer = await conn.answer(5000);
        assert.equal(answer.status, 413, r.name);
        conn.socket.end();
        await conn.closedWithin();
        const read = sockets.of(conn).bytesRead;
        assert.ok(read < READ_BOUND, `${r.name}: the server read ${read} bytes of the body`);
      }
    });

    it('a chunked body is read up to the limit and no further; no file staged past the file limit, nothing kept', async () => {
      for (const r of routes) {
        const [files, media] = [await storedFiles(env.config.mediaDir), await mediaCount()];
        store.largest = 0;
        const conn = await RawConnection.open(port);
        conn.write(
          head('POST', r.path, {
            Authorization: `Bearer ${r.key()}`,
            'Content-Type': contentType(r),
            'Transfer-Encoding': 'chunked',
          }),
        );
        const start = Buffer.from(bodyStart(r));
        conn.write(`${start.length.toString(16)}\r\n`);
        conn.write(start);
        conn.write('\r\n');
        const sent = await conn.stream(FLOOD, true);
        const answer = await conn.answer(5000);
        assert.equal(answer.status, 413, `${r.name}: ${answer.body}`);
        assert.equal(JSON.parse(answer.body).code, 'too_large', r.name);
        assert.ok(sent < FLOOD, `${r.name}: the client sent the whole flood before an answer`);
        conn.socket.end();
        await conn.closedWithin();
        const read = sockets.of(conn).bytesRead;
        assert.ok(read < READ_BOUND, `${r.name}: the server read ${read} bytes of the body`);
        // the media proxy reads its JPEG into memory (8 MiB at most) instead of staging it
        if (r.field && !r.name.includes('proxy'))
          assert.ok(store.largest <= FILE_LIMIT, `${r.name}: ${store.largest} bytes staged`);
        await assertNothingKept(files, media);
      }
    });

    it('Expect: 100-continue: a body over the limit, or a request refused before its body, is answered without asking for the body', async () => {
      const versions = routes[0]!;
      const refusals: Array<[string, Record<string, string | number>, number]> = [
        ['over the limit', { Authorization: `Bearer ${wide}`, 'Content-Length': GiB }, 413],
        ['no key', { 'Content-Length': 4096 }, 401],
        ['the wrong type', { Authorization: `Bearer ${wide}`, 'Content-Length': 4096 }, 415],
      ];
      for (const [what, headers, status] of refusals) {
        const conn = await RawConnection.open(port);
        conn.write(
          head('POST', versions.path, {
            'Content-Type': status === 415 ? 'text/plain' : contentType(versions),
            Expect: '100-continue',
            ...headers,
          }),
        );
        const answer = await conn.answer(5000);
        assert.equal(answer.status, status, `${what}: the first answer (${answer.body})`);
        assert.equal(answer.headers.connection, 'close', what);
        assert.equal(await conn.closedWithin(), 'end', what);
      }
    });

    it('Expect: 100-continue within the limit: 100, then the body, then 201', async () => {
      const image = await jpeg(7);
      const body = Buffer.concat([
        Buffer.from(formHead('file')),
        image,
        Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
      ]);
      const conn = await RawConnection.open(port);
      conn.write(
        head('POST', routes[0]!.path, {
          Authorization: `Bearer ${wide}`,
          'Content-Type': contentType(routes[0]!),
          'Content-Length': body.length,
          Expect: '100-continue',
        }),
      );
      assert.equal((await conn.answer(5000)).status, 100);
      conn.write(body);
      const created = await conn.answer(5000);
      assert.equal(created.status, 201, created.body);
      assert.notEqual(created.headers.connection, 'close');
      conn.destroy();
    });

    it('a refusal before the body of a large upload (no key) does not wait for it: answered and closed at once', async () => {
      const conn = await RawConnection.open(port);
      conn.write(
        head('POST', routes[0]!.path, {
          'Content-Type': contentType(routes[0]!),
          'Content-Length': 64 * FILE_LIMIT,
        }),
      );
      const answer = await conn.answer(5000);
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.connection, 'close');
      assert.equal(await conn.closedWithin(), 'end');
    });

    it('a small body refused before it is read is dropped and the connection kept: the next request on it is answered', async () => {
      const conn = await RawConnection.open(port);
      const body = Buffer.concat([
        Buffer.from(formHead('file')),
        Buffer.alloc(300_000, 1),
        Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
      ]);
      conn.write(
        head('POST', '/api/v1/assets/999999/versions', {
          Authorization: `Bearer ${wide}`,
          'Content-Type': contentType(routes[0]!),
          'Content-Length': body.length,
        }),
      );
      conn.write(body);
      const refused = await conn.answer(5000);
      assert.equal(refused.status, 404);
      assert.notEqual(refused.headers.connection, 'close');
      conn.write(head('GET', '/api/v1/production', { Authorization: `Bearer ${wide}` }));
      const next = await conn.answer(5000);
      assert.equal(next.status, 200, next.body);
      conn.destroy();
    });
  });
}
