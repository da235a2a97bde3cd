import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { operationSamples } from './support/operation-samples.js';
import { ALL_SCOPES, importRoundTrip, type Refs } from './support/round-trip.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * The response headers the OpenAPI document states are the ones the server sends: each request
 * here meets a documented response, and every header documented for it is on the real answer;
 * and the other way round, every header a real answer sends is documented for it.
 */

/**
 * Headers every answer may carry that no response lists: the message's framing, which HTTP
 * itself defines (the body's type is its response's `content`), and `X-Content-Type-Options`,
 * which the document's description states once for every answer.
 */
const FRAMING = ['content-type', 'content-length', 'transfer-encoding', 'date', 'connection', 'keep-alive'];
const EVERY_ANSWER = ['x-content-type-options'];
/** What a JSON answer carries only when it goes out compressed. */
const UNCOMPRESSED = ['Content-Encoding', 'Vary'];

for (const dialect of DIALECTS) {
  describe(`documented response headers are sent [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let doc: any;
    let key: string;
    before(async () => {
      env = await createEnv(dialect, { PRODGRAPH_RATE_LIMIT: '1000' });
      refs = await importRoundTrip(env, 'film');
      key = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      doc = JSON.parse((await env.app.inject({ url: '/api/v1/openapi.json' })).body);
    });
    after(() => env.close());

    /** Sends a request and checks its answer against what the document says of that status. */
    async function check(
      method: 'GET' | 'POST',
      path: string,
      url: string,
      options: {
        headers?: Record<string, string>;
        payload?: object;
        status: number;
        auth?: boolean;
        /** Documented headers this answer rightly lacks (they say when they are sent). */
        except?: string[];
        /** A JSON answer under 1 kB: sent as it is, so without the compressed answer's headers. */
        small?: boolean;
      },
    ) {
      const res = await env.app.inject({
        method,
        url,
        headers: {
          ...(options.auth === false ? {} : { authorization: `Bearer ${key}` }),
          ...options.headers,
        },
        ...(options.payload ? { payload: options.payload } : {}),
      });
      assert.equal(res.statusCode, options.status, `${method} ${url}: ${res.body.slice(0, 200)}`);
      const documented = doc.paths[path][method.toLowerCase()].responses[String(options.status)];
      assert.ok(documented, `${method} ${path} documents ${options.status}`);
      const names = Object.keys(documented.headers ?? {});
      const except = [...(options.except ?? []), ...(options.small ? UNCOMPRESSED : [])];
      if (options.small) assert.equal(res.headers['content-encoding'], undefined, `${method} ${url}`);
      const absent = names.filter((h) => res.headers[h.toLowerCase()] === undefined && !except.includes(h));
      assert.deepEqual(absent, [], `${method} ${url} ${options.status}`);
      return { res, names };
    }

    it('lists, bundles, writes and their replays, media bytes and ranges', async () => {
      // a page is not kept (no ETag) and this one is too small to compress
      const page = await check('GET', '/api/v1/assets', '/api/v1/assets?limit=1', {
        status: 200,
        except: ['ETag', 'Vary', 'Content-Encoding'],
      });
      assert.ok(page.names.includes('Link') && page.names.includes('RateLimit-Remaining'));
      // the whole list is kept: its ETag (this one is under 1 kB: never compressed)
      const list = await check('GET', '/api/v1/assets', '/api/v1/assets', {
        status: 200,
        headers: { 'accept-encoding': 'gzip' },
        except: ['Link', 'Content-Encoding'],
      });
      await check('GET', '/api/v1/assets', '/api/v1/assets', {
        status: 304,
        headers: { 'if-none-match': String(list.res.headers.etag) },
      });

      const bundle = '/api/v1/bundles/scene/{node_id}';
      const first = await check('GET', bundle, `/api/v1/bundles/scene/${refs.sc1}`, {
        status: 200,
        headers: { 'accept-encoding': 'br' },
      });
      const etag = String(first.res.headers.etag);
      await check('GET', bundle, `/api/v1/bundles/scene/${refs.sc1}`, {
        status: 304,
        headers: { 'if-none-match': etag },
      });

      const made = { headers: { 'idempotency-key': 'headers-test-1' }, payload: { label: 'Documented' } };
      // the first answer is no replay: only the repeat says so
      await check('POST', '/api/v1/assets', '/api/v1/assets', {
        ...made,
        status: 201,
        except: ['Idempotent-Replayed'],
        small: true,
      });
      const replay = await check('POST', '/api/v1/assets', '/api/v1/assets', {
        ...made,
        status: 201,
        small: true,
      });
      assert.ok(replay.names.includes('Idempotent-Replayed') && replay.names.includes('Location'));

      const media = (
        await env.app.inject({
          url: `/api/v1/bundles/scene/${refs.sc1}`,
          headers: { authorization: `Bearer ${key}` },
        })
      )
        .json()
        .assets.flatMap((a: any) => a.released_versions)
        .find((v: any) => v.media_id).media_id;
      const content = '/api/v1/media/{id}/content';
      const url = `/api/v1/media/${media}/content`;
      const whole = await check('GET', content, url, { status: 200 });
      await check('GET', content, url, { status: 206, headers: { range: 'bytes=0-3' } });
      await check('GET', content, url, {
        status: 304,
        headers: { 'if-none-match': String(whole.res.headers.etag) },
      });
      await check('GET', content, url, { status: 416, headers: { range: 'bytes=999999-' } });
      // an admin's look at the same bytes as a vendor gets them: the same answers, documented alike
      const admin = await env.mint({ production: 'film', scopes: ['admin'] });
      const viewed = '/api/v1/admin/engagements/{id}/view/media/{media_id}/content';
      const viewUrl = `/api/v1/admin/engagements/${refs['eng-pix']}/view/media/${media}/content`;
      const asAdmin = (headers: Record<string, string> = {}) => ({
        headers: { authorization: `Bearer ${admin}`, ...headers },
      });
      const seen = await check('GET', viewed, viewUrl, { status: 200, ...asAdmin() });
      assert.equal(seen.res.headers.etag, whole.res.headers.etag);
      await check('GET', viewed, viewUrl, { status: 206, ...asAdmin({ range: 'bytes=0-3' }) });
      await check('GET', viewed, viewUrl, {
        status: 304,
        ...asAdmin({ 'if-none-match': String(whole.res.headers.etag) }),
      });
      await check('GET', viewed, viewUrl, { status: 416, ...asAdmin({ range: 'bytes=999999-' }) });
      await check('GET', '/api/v1/media-ticket', '/api/v1/media-ticket', { status: 200, small: true });
    });

    it('refusals: 401 names the scheme, 405 the methods, 429 when to come back', async () => {
      await check('GET', '/api/v1/production', '/api/v1/production', {
        status: 401,
        auth: false,
        small: true,
      });
      await check('GET', '/mcp', '/mcp', { status: 405, auth: false, small: true });
      const tight = await createEnv(dialect, { PRODGRAPH_RATE_LIMIT: '2' });
      try {
        await tight.import((await import('./support/fixtures.js')).smallProduction('tight'));
        const k = await tight.mint({ production: 'tight', scopes: ['read'] });
        const send = () =>
          tight.app.inject({ url: '/api/v1/production', headers: { authorization: `Bearer ${k}` } });
        await send();
        await send();
        const res = await send();
        assert.equal(res.statusCode, 429);
        assert.equal(res.headers['content-encoding'], undefined, 'a refusal under 1 kB');
        const names = Object.keys(doc.paths['/api/v1/production'].get.responses['429'].headers);
        assert.deepEqual(
          names.filter((h) => res.headers[h.toLowerCase()] === undefined && !UNCOMPRESSED.includes(h)),
          [],
        );
        assert.ok(names.includes('Retry-After'));
      } finally {
        await tight.close();
      }
    });

    it('every header a real answer sends is documented: one request per operation, gzip asked for', async () => {
      assert.match(doc.info.description, /Every answer carries `X-Content-Type-Options: nosniff`/);
      const samples = await operationSamples(env, refs);
      const documentedIds = Object.values<any>(doc.paths).flatMap((item) =>
        Object.values<any>(item).map((op) => op.operationId),
      );
      assert.deepEqual(
        samples.map((s) => s.operationId).sort(),
        documentedIds.sort(),
        'one sample for every operation of the document',
      );
      const undocumented: string[] = [];
      let compressed = 0;
      for (const sample of samples) {
        const res = await sample.send();
        const where = `${sample.operationId} ${res.statusCode}`;
        assert.equal(res.statusCode, sample.status, `${where}: ${res.body.slice(0, 200)}`);
        const op = doc.paths[sample.path][sample.method.toLowerCase()];
        assert.equal(op.operationId, sample.operationId);
        const response = op.responses[String(res.statusCode)];
        assert.ok(response, `${where} is documented`);
        const documented = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
        for (const name of Object.keys(res.headers)) {
          if (FRAMING.includes(name) || EVERY_ANSWER.includes(name)) continue;
          if (!documented.includes(name)) undocumented.push(`${where} ${name}`);
        }
        if (res.headers['content-encoding'] === 'gzip') compressed++;
      }
      assert.deepEqual(undocumented, []);
      // the samples meet compression on many answers, not only on the kept ones
      assert.ok(compressed >= 10, `${compressed} answers compressed`);
    });
  });
}
