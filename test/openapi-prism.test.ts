import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { multipart } from './support/multipart.js';
import { operationSamples } from './support/operation-samples.js';
import { injectOver, startPrism, violationsOf, type PrismProxy } from './support/prism.js';
import { ALL_SCOPES, importRoundTrip, type Refs } from './support/round-trip.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * Stoplight Prism, a third-party OpenAPI checker, between a client and a real server: `prism
 * proxy <the served document> <the server> --errors`. One request per operation of the document
 * (the success case) goes through a proxy that checks the request and the answer; the main
 * refusals go through one that checks the answer only (it forwards a request the document says
 * is wrong, to see how the server refuses it). Any violation Prism reports fails the test: its
 * own problem answer (what `--errors` makes of a violation), the `sl-violations` header (which
 * names warnings too, such as an undocumented status), or a `Violation:` line in its log.
 */

/**
 * A GIF of one pixel whose every byte is ASCII. Prism reads a multipart body as UTF-8 text and
 * forwards that text, so a file with bytes that are not UTF-8 would reach the server altered.
 */
const ASCII_GIF = Buffer.from([
  ...Buffer.from('GIF89a'),
  ...[1, 0, 1, 0, 0, 0, 0], // 1×1, no colour table
  ...[0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0], // the image, at 0,0, 1×1
  ...[2, 2, 0x44, 0x01, 0, 0x3b], // its LZW data, then the trailer
]);

/** The file route's path parameter holds `/`: Prism matches one segment per parameter, so send it encoded (the server serves the same file). */
const encodedFilePath = (url: string) =>
  url.replace(/^\/media\/([^?]+)/, (_m, rest: string) => `/media/${rest.replace(/\//g, '%2F')}`);

/** The forms whose files are an array: a submission's, a delivery package's. */
const ARRAY_FORMS = /^\/api\/v1\/(turnovers\/\d+\/submissions|admin\/deliveries\/\d+\/files)$/;

/** What Prism said of one exchange, empty when it found nothing. */
function complaints(res: LightMyRequestResponse): string[] {
  const found = violationsOf(res).map((v) => `${v.location.join('.')}: ${v.message}`);
  if (String(res.headers['content-type']).startsWith('application/problem+json'))
    found.push(`prism answered for the server: ${res.body.slice(0, 400)}`);
  return found;
}

for (const dialect of DIALECTS) {
  describe(`Prism finds the server true to its OpenAPI document [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let base: string;
    let strict: PrismProxy;
    let answers: PrismProxy;
    let doc: any;

    before(async () => {
      env = await createEnv(dialect, { PRODGRAPH_MAX_EVENT_BATCH: '5' });
      refs = await importRoundTrip(env, 'film');
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
      // the document the server serves, as a file: Prism fetching it itself gives up after 5 s on a busy machine
      const served = await env.app.inject({ url: '/api/v1/openapi.json' });
      doc = JSON.parse(served.body);
      const document = join(env.dir, 'openapi.json');
      await writeFile(document, served.body);
      [strict, answers] = await Promise.all([
        startPrism(document, base, { validateRequest: true }),
        startPrism(document, base, { validateRequest: false }),
      ]);
    });
    after(async () => {
      await Promise.all([strict?.close(), answers?.close()]);
      await env?.close();
    });

    it('one request per operation: every request and every answer as the document says', async () => {
      const over = injectOver(strict.url);
      const answersOnly = injectOver(answers.url);
      const samples = await operationSamples(env, refs, {
        // Prism reads repeated form parts as one value, the last, so a form whose array of files
        // holds one is "not an array" to it (stoplightio/prism#2654): the submission's answer is
        // checked, its request not
        inject: (o) => (ARRAY_FORMS.test(o.url) ? answersOnly : over)({ ...o, url: encodedFilePath(o.url) }),
        // Prism's client decodes a compressed answer but passes its Content-Encoding on
        acceptEncoding: null,
        still: { content: ASCII_GIF, filename: 'still.gif', contentType: 'image/gif' },
      });
      const documented = Object.values<any>(doc.paths).flatMap((item) =>
        Object.values<any>(item).map((op) => op.operationId),
      );
      assert.deepEqual(samples.map((s) => s.operationId).sort(), documented.sort());
      const found: string[] = [];
      for (const sample of samples) {
        const res = await sample.send();
        const where = `${sample.method} ${sample.path} ${res.statusCode}`;
        if (res.statusCode !== sample.status)
          found.push(`${where}: expected ${sample.status}: ${res.body.slice(0, 300)}`);
        found.push(...complaints(res).map((c) => `${where}: ${c}`));
      }
      // The storage agent's form of the media proxy, besides the JSON form the samples send: a
      // request Prism must take as documented. Its file cannot be a JPEG here (a JPEG's bytes are
      // never UTF-8 text, which is all Prism forwards), so the server's answer is the documented
      // 415 for bytes that are not a JPEG.
      const wide = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      const proxy = await uploadProxyForm(over, wide);
      if (proxy.statusCode !== 415)
        found.push(`media proxy form ${proxy.statusCode}: ${proxy.body.slice(0, 300)}`);
      found.push(...complaints(proxy).map((c) => `media proxy form: ${c}`));
      assert.deepEqual(found, []);
      assert.deepEqual(strict.logged, []);
    });

    it('the main refusals (400, 401, 403, 404, 405, 409, 413, 415, 416, 422) and 304 as documented', async () => {
      const send = injectOver(answers.url);
      const wide = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      const reader = await env.mint({ production: 'film', scopes: ['read'] });
      const vendor = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      const admin = await env.mint({ production: 'film', scopes: ['admin'] });
      const noFile = multipart([{ name: 'title', value: 'no file' }]);
      const as = (key: string, extra: Record<string, string> = {}) => ({
        authorization: `Bearer ${key}`,
        ...extra,
      });
      const json = (key: string) => as(key, { 'content-type': 'application/json' });
      const A = '/api/v1';
      const list = await send({ url: `${A}/assets`, headers: as(wide) });
      const etag = String(list.headers.etag);
      const media = (await env.app.inject({ url: `${A}/bundles/scene/${refs.sc1}`, headers: as(wide) }))
        .json()
        .assets.flatMap((a: any) => a.released_versions)
        .find((v: any) => v.media_id).media_id;
      const events = (n: number) => ({
        filespace: 'film-fs',
        events: Array.from({ length: n }, (_, i) => ({
          event_type: 'create',
          path: `refused/${i}.exr`,
          source: 'scan',
          dedupe_key: `refused-${i}`,
          detected_at: '2026-05-01T10:00:00Z',
        })),
      });
      const cases: Array<[number, Parameters<typeof send>[0]]> = [
        [304, { url: `${A}/assets`, headers: as(wide, { 'if-none-match': etag }) }],
        [400, { method: 'POST', url: `${A}/assets`, headers: json(wide), payload: '{"label": ' }],
        // (a request with no key at all Prism refuses itself, as its security check says)
        [
          401,
          { url: `${A}/production`, headers: as('pgk_nothere_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx') },
        ],
        [403, { url: `${A}/production`, headers: as(vendor) }],
        [403, { method: 'POST', url: `${A}/assets`, headers: json(reader), payload: '{"label":"x"}' }],
        [404, { url: `${A}/assets/999999`, headers: as(wide) }],
        [404, { url: `${A}/media/999999/content`, headers: as(wide) }],
        // a method the document does not list is Prism's own 405 (it forwards only operations):
        // the documented 405 is the MCP transport's, and PUT on a known path is held in errors.test.ts
        [405, { url: '/mcp' }],
        [
          409,
          {
            method: 'POST',
            url: `${A}/admin/engagements`,
            headers: json(admin),
            payload: JSON.stringify({ ref: 'eng-pix', organisation_id: refs['org-hal'] }),
          },
        ],
        [
          413,
          {
            method: 'POST',
            url: `${A}/storage/events`,
            headers: json(wide),
            payload: JSON.stringify(events(6)),
          },
        ],
        [
          415,
          {
            method: 'POST',
            url: `${A}/assets`,
            headers: as(wide, { 'content-type': 'text/plain' }),
            payload: 'label',
          },
        ],
        [
          415,
          {
            method: 'POST',
            url: `${A}/vision/session-token`,
            headers: as(wide, { 'content-type': 'text/plain' }),
            payload: 'x',
          },
        ],
        [416, { url: `${A}/media/${media}/content`, headers: as(wide, { range: 'bytes=99999999-' }) }],
        [422, { url: `${A}/assets?limit=0`, headers: as(wide) }],
        [422, { method: 'POST', url: `${A}/assets`, headers: json(wide), payload: '{"label": 42}' }],
        [
          422,
          {
            method: 'POST',
            url: `${A}/turnovers/${refs['dl-plates']}/submissions`,
            headers: as(vendor, noFile.headers),
            payload: noFile.payload,
          },
        ],
      ];
      const found: string[] = [];
      for (const [status, request] of cases) {
        const res = await send({ method: 'GET', headers: {}, ...request });
        const where = `${request.method ?? 'GET'} ${request.url} ${res.statusCode}`;
        if (res.statusCode !== status) found.push(`${where}: expected ${status}: ${res.body.slice(0, 300)}`);
        found.push(...complaints(res).map((c) => `${where}: ${c}`));
      }
      assert.deepEqual(found, []);
      assert.deepEqual(answers.logged, []);
    });
  });
}

/** `POST /storage/media-proxy` as a form: the storage agent's other way to send the JPEG. */
async function uploadProxyForm(send: ReturnType<typeof injectOver>, key: string) {
  const form = multipart([
    { name: 'filespace', value: 'film-fs' },
    { name: 'path', value: 'sampled/a.exr' },
    { name: 'file', filename: 'proxy.gif', content: ASCII_GIF, contentType: 'image/gif' },
  ]);
  return send({
    method: 'POST',
    url: '/api/v1/storage/media-proxy',
    headers: { authorization: `Bearer ${key}`, ...form.headers },
    payload: form.payload,
  });
}
