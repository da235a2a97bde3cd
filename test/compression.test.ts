import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { AnswerCache } from '../src/http/answer-cache.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { loadDemo } from './support/read.js';

/*
 * Compressed answers (src/http/compression.ts) and kept answers' ETags (src/http/answer-cache.ts):
 * what a client sees with and without Accept-Encoding, and that media bytes are left alone.
 */

type Encoding = 'gzip' | 'br';
const decode = (raw: Buffer, encoding: string | undefined): Buffer =>
  encoding === 'gzip' ? gunzipSync(raw) : encoding === 'br' ? brotliDecompressSync(raw) : raw;

for (const dialect of DIALECTS) {
  describe(`compressed answers, ETags and 304 [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let writer: string;
    let coat: number;

    before(async () => {
      env = await createEnv(dialect);
      coat = (await loadDemo(env, 'episodic')).refs['co-mara-coat']!;
      token = await env.mint({ production: 'nightfall', scopes: ['read'] });
      writer = await env.mint({ production: 'nightfall', scopes: ['read', 'write'] });
    });
    after(() => env.close());

    const fetchRaw = (url: string, headers: Record<string, string> = {}, key = token) =>
      env.app.inject({ url, headers: { authorization: `Bearer ${key}`, ...headers } });

    for (const path of ['/scenes', '/assets', '/assets/{coat}']) {
      it(`${path}: gzip and br decode to the very JSON sent without, every time, with Vary`, async () => {
        const url = `/api/v1${path.replace('{coat}', String(coat))}`;
        const plain = await fetchRaw(url);
        assert.equal(plain.statusCode, 200);
        assert.equal(plain.headers['content-encoding'], undefined);
        assert.ok(plain.rawPayload.length >= 1024, 'large enough to be compressed');
        assert.match(String(plain.headers.vary), /accept-encoding/i);
        for (const encoding of ['gzip', 'br', 'gzip', 'br'] as Encoding[]) {
          const res = await fetchRaw(url, { 'accept-encoding': encoding });
          assert.equal(res.statusCode, 200);
          assert.equal(res.headers['content-encoding'], encoding);
          assert.match(String(res.headers.vary), /accept-encoding/i);
          assert.equal(res.headers.etag, plain.headers.etag, 'one tag: it names the JSON document');
          assert.ok(res.rawPayload.length < plain.rawPayload.length / 2);
          assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
          assert.deepEqual(JSON.parse(decode(res.rawPayload, encoding).toString()), JSON.parse(plain.body));
        }
        // the client's preference decides; an encoding the server does not speak means none
        const prefers = await fetchRaw(url, { 'accept-encoding': 'gzip;q=1, br;q=0.5' });
        assert.equal(prefers.headers['content-encoding'], 'gzip');
        const neither = await fetchRaw(url, { 'accept-encoding': 'deflate, identity' });
        assert.equal(neither.headers['content-encoding'], undefined);
        assert.equal(neither.body, plain.body);
      });
    }

    it('a kept list carries an ETag: If-None-Match answers 304 with no body until the list changes', async () => {
      const first = await fetchRaw('/api/v1/scenes');
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[\w-]{43}"$/);
      const encodings: Record<string, string>[] = [
        {},
        { 'accept-encoding': 'gzip' },
        { 'accept-encoding': 'br' },
      ];
      for (const headers of encodings) {
        const again = await fetchRaw('/api/v1/scenes', { 'if-none-match': etag, ...headers });
        assert.equal(again.statusCode, 304);
        assert.equal(again.rawPayload.length, 0);
        assert.equal(again.headers.etag, etag);
        assert.match(String(again.headers.vary), /accept-encoding/i);
      }
      // a write elsewhere in the production leaves the scene list, and so its tag, as it was
      const made = await env.app.inject({
        method: 'POST',
        url: '/api/v1/assets',
        headers: { authorization: `Bearer ${writer}` },
        payload: { label: 'Flare gun' },
      });
      assert.equal(made.statusCode, 201);
      assert.equal((await fetchRaw('/api/v1/scenes', { 'if-none-match': etag })).statusCode, 304);
      // the asset list did change: the old tag no longer matches
      const assets = await fetchRaw('/api/v1/assets');
      assert.ok(assets.body.includes('Flare gun'));
      const stale = String(assets.headers.etag);
      await env.app.inject({
        method: 'POST',
        url: '/api/v1/assets',
        headers: { authorization: `Bearer ${writer}` },
        payload: { label: 'Signal mirror' },
      });
      const fresh = await fetchRaw('/api/v1/assets', { 'if-none-match': stale });
      assert.equal(fresh.statusCode, 200);
      assert.notEqual(fresh.headers.etag, stale);
    });

    it('a small answer goes out as it is, whatever the client accepts', async () => {
      const res = await fetchRaw('/api/v1/turnovers', { 'accept-encoding': 'gzip, br' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '[]');
      assert.equal(res.headers['content-encoding'], undefined);
      const health = await env.app.inject({ url: '/healthz', headers: { 'accept-encoding': 'gzip' } });
      assert.equal(health.headers['content-encoding'], undefined);
      JSON.parse(health.body);
    });

    it('any other JSON answer over 1 kB is compressed when asked: a page, the MCP endpoint', async () => {
      const url = '/api/v1/scenes?limit=50';
      const plain = await fetchRaw(url);
      assert.ok(plain.rawPayload.length >= 1024);
      const zipped = await fetchRaw(url, { 'accept-encoding': 'gzip' });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.match(String(zipped.headers.vary), /accept-encoding/i);
      assert.deepEqual(JSON.parse(gunzipSync(zipped.rawPayload).toString()), JSON.parse(plain.body));
      const rpc = (headers: Record<string, string>) =>
        env.app.inject({
          method: 'POST',
          url: '/mcp',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json',
            ...headers,
          },
          payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
        });
      const tools = await rpc({});
      const brTools = await rpc({ 'accept-encoding': 'br' });
      assert.equal(brTools.statusCode, 200);
      assert.equal(brTools.headers['content-encoding'], 'br');
      assert.deepEqual(
        JSON.parse(brotliDecompressSync(brTools.rawPayload).toString()),
        JSON.parse(tools.body),
      );
    });

    it('media bytes are never encoded: Content-Length and Range are the stored file’s', async () => {
      const asset = JSON.parse((await fetchRaw(`/api/v1/assets/${coat}`)).body);
      const path = asset.versions.find((v: { released: boolean }) => v.released).media_path as string;
      const ticket = JSON.parse((await fetchRaw('/api/v1/media-ticket')).body).ticket as string;
      const url = `${path}?t=${encodeURIComponent(ticket)}`;
      const whole = await env.app.inject({ url });
      const size = whole.rawPayload.length;
      for (const encoding of ['gzip', 'br']) {
        const full = await env.app.inject({ url, headers: { 'accept-encoding': encoding } });
        assert.equal(full.headers['content-encoding'], undefined);
        assert.equal(Number(full.headers['content-length']), size);
        assert.deepEqual(full.rawPayload, whole.rawPayload);
        const part = await env.app.inject({
          url,
          headers: { range: 'bytes=10-19', 'accept-encoding': encoding },
        });
        assert.equal(part.statusCode, 206);
        assert.equal(part.headers['content-encoding'], undefined);
        assert.equal(part.headers['content-range'], `bytes 10-19/${size}`);
        assert.equal(part.headers['content-length'], '10');
        assert.deepEqual(part.rawPayload, whole.rawPayload.subarray(10, 20));
      }
    });
  });
}

describe('the answer cache counts what it holds', () => {
  it('its bytes are the JSON and every encoded form kept, each in a buffer of its own', async () => {
    const cache = new AnswerCache(1024 * 1024);
    const body = Buffer.from(
      JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, label: `row ${i}` }))),
    );
    const key = 'k';
    cache.set(key, { body, etag: '"x"', encoded: {} });
    const plain = cache.bytes;
    assert.ok(plain >= body.length && plain < body.length + 1024);
    const answer = cache.get(key)!;
    const [gz, gz2] = await Promise.all([
      cache.encoded(key, answer, 'gzip'),
      cache.encoded(key, answer, 'gzip'),
    ]);
    assert.equal(gz, gz2, 'compressed once for concurrent requests');
    const br = await cache.encoded(key, cache.get(key)!, 'br');
    assert.equal(cache.bytes, plain + gz.length + br.length);
    for (const b of [gz, br]) assert.equal(b.buffer.byteLength, b.length, 'not a slice of a shared slab');
    assert.equal(await cache.encoded(key, cache.get(key)!, 'gzip'), gz, 'kept');
    assert.equal(cache.stats.evictions, 0);
  });
});

describe('the answer cache keeps only current answers', () => {
  it('filing an answer of a newer revision drops that production’s older ones, and a late older one is not kept', () => {
    const cache = new AnswerCache(1024 * 1024);
    const answer = () => ({ body: Buffer.from('[1]'), etag: '"x"', encoded: {} });
    cache.set('7:1:production:scenes:', answer());
    cache.set('7:1:production:assets:', answer());
    cache.set('8:1:production:scenes:', answer());
    assert.equal(cache.entries, 3);
    cache.set('7:2:production:scenes:', answer());
    assert.equal(cache.entries, 2, "production 7's revision-1 answers are gone, production 8's stay");
    assert.equal(cache.get('7:1:production:assets:'), undefined);
    cache.set('7:1:production:assets:', answer());
    assert.equal(cache.get('7:1:production:assets:'), undefined, 'assembled at a superseded revision');
    assert.ok(cache.get('8:1:production:scenes:'));
    assert.equal(cache.stats.evictions, 0);
  });
});
