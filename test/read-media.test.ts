import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { issueTicket } from '../src/modules/media-ticket/ticket.js';
import { mediaRestOf } from '../src/modules/media-ticket/media-path.js';
import { revokeKey } from '../src/auth/key-service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { contactLeaks, demoContacts, loadDemo, recordingGet } from './support/read.js';

/** Every `media_path` value anywhere in a JSON value. */
function mediaPaths(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(mediaPaths);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) =>
      k === 'media_path' && typeof v === 'string' ? [v] : mediaPaths(v),
    );
  }
  return [];
}

/** A request with the path sent byte for byte, as a hostile client would (inject normalises it). */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const dialect of DIALECTS) {
  describe(`read surface: media ticket and the off-plane file route [${dialect}]`, () => {
    let env: TestEnv;
    let series: string;
    let film: string;
    let s: Record<string, number>;
    const get = recordingGet();

    before(async () => {
      env = await createEnv(dialect);
      s = (await loadDemo(env, 'episodic')).refs;
      await loadDemo(env, 'single');
      series = await env.mint({ production: 'nightfall', scopes: ['read'] });
      film = await env.mint({ production: 'lanternfall', scopes: ['read'] });
    });
    after(() => env.close());

    const ticketFor = async (token: string) => {
      const r = await get(env.app, '/api/v1/media-ticket', token);
      assert.equal(r.status, 200);
      return r.body as { ticket: string; expires_at: string; production_id: number };
    };
    const coatPath = async (token = series) => {
      const r = await get(env.app, `/api/v1/assets/${s['co-mara-coat']}`, token);
      return r.body.versions.find((v: { released: boolean }) => v.released).media_path as string;
    };

    it("GET /media-ticket: a 15-minute ticket for the key's production, never cached", async () => {
      const r = await get(env.app, '/api/v1/media-ticket', series);
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body).sort(), ['expires_at', 'production_id', 'ticket']);
      const production = (await get(env.app, '/api/v1/production', series)).body;
      assert.equal(r.body.production_id, production.id);
      const ttl = Date.parse(r.body.expires_at) - Date.now();
      assert.ok(ttl > 14 * 60_000 && ttl <= 15 * 60_000, `ttl ${ttl}`);
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.equal((await ticketFor(film)).production_id !== r.body.production_id, true);
    });

    it('every media_path the API returns is served by the off-plane route', async () => {
      const { ticket } = await ticketFor(series);
      // give a job a result so /jobs returns a media_path too
      const anyMedia = await env.handle.db
        .selectFrom('media')
        .innerJoin('productions', 'productions.id', 'media.production_id')
        .where('productions.code', '=', 'nightfall')
        .select('media.id')
        .executeTakeFirstOrThrow();
      await env.handle.db
        .updateTable('generation_jobs')
        .set({ media_id: anyMedia.id })
        .where('id', '=', s['job-1']!)
        .execute();
      const bodies = [(await get(env.app, '/api/v1/jobs', series)).body];
      for (const row of (await get(env.app, '/api/v1/assets?released=1', series)).body) {
        bodies.push((await get(env.app, `/api/v1/assets/${row.node_id}`, series)).body);
      }
      const paths = [...new Set(bodies.flatMap(mediaPaths))];
      assert.ok(paths.length > 20, `${paths.length} media paths`);
      for (const path of paths) {
        const r = await env.app.inject({ url: `${path}?t=${encodeURIComponent(ticket)}` });
        assert.equal(r.statusCode, 200, path);
        assert.equal(r.headers['content-type'], 'image/jpeg');
        assert.equal(Number(r.headers['content-length']), r.rawPayload.length);
      }
    });

    it('streams with Content-Type, Content-Length, ETag, Last-Modified; honours Range and If-None-Match', async () => {
      const { ticket } = await ticketFor(series);
      const url = `${await coatPath()}?t=${ticket}`;
      const whole = await env.app.inject({ url });
      assert.equal(whole.statusCode, 200);
      assert.equal(whole.rawPayload.subarray(0, 3).toString('hex'), 'ffd8ff');
      assert.match(String(whole.headers.etag), /^"[0-9a-f]{64}"$/);
      assert.ok(whole.headers['last-modified']);
      assert.equal(whole.headers['accept-ranges'], 'bytes');
      const size = whole.rawPayload.length;
      const part = await env.app.inject({ url, headers: { range: 'bytes=10-19' } });
      assert.equal(part.statusCode, 206);
      assert.equal(part.headers['content-range'], `bytes 10-19/${size}`);
      assert.equal(part.headers['content-length'], '10');
      assert.deepEqual(part.rawPayload, whole.rawPayload.subarray(10, 20));
      const tail = await env.app.inject({ url, headers: { range: 'bytes=-5' } });
      assert.deepEqual(tail.rawPayload, whole.rawPayload.subarray(size - 5));
      const beyond = await env.app.inject({ url, headers: { range: `bytes=${size}-` } });
      assert.equal(beyond.statusCode, 416);
      assert.equal(beyond.headers['content-range'], `bytes */${size}`);
      // a JSON refusal, not the file: no file name, and never inline
      assert.equal(beyond.headers['content-disposition'], undefined);
      assert.match(String(beyond.headers['content-security-policy']), /sandbox/);
      const cached = await env.app.inject({ url, headers: { 'if-none-match': String(whole.headers.etag) } });
      assert.equal(cached.statusCode, 304);
    });

    it('refuses a missing, forged, malformed or expired ticket with 401, whatever bearer header comes along', async () => {
      const path = await coatPath();
      const { ticket } = await ticketFor(series);
      const [pid, keyId, exp, sig] = ticket.split('.');
      const flipped = sig!.slice(0, -1) + (sig!.endsWith('A') ? 'B' : 'A');
      const expired = issueTicket(
        env.app.ctx,
        { productionId: Number(pid), keyId: Number(keyId) } as never,
        Date.now() - 16 * 60_000,
      ).ticket;
      for (const t of [
        null,
        '',
        'nonsense',
        `${pid}.${keyId}.${exp}.${flipped}`,
        `${pid}.${keyId}.${Number(exp) + 3600}.${sig}`,
        `${pid}.${Number(keyId) + 1}.${exp}.${sig}`,
        expired,
      ]) {
        const r = await env.app.inject({
          url: t === null ? path : `${path}?t=${encodeURIComponent(t)}`,
          headers: { authorization: `Bearer ${series}` },
        });
        assert.equal(r.statusCode, 401, String(t));
        assert.match(JSON.parse(r.body).detail, /ticket/);
      }
    });

    it("a ticket dies with its key, and never opens another production's media", async () => {
      const doomed = await env.mint({ production: 'nightfall', scopes: ['read'] });
      const { ticket } = await ticketFor(doomed);
      const path = await coatPath();
      assert.equal((await env.app.inject({ url: `${path}?t=${ticket}` })).statusCode, 200);
      const keyId = Number(ticket.split('.')[1]);
      await revokeKey(env.handle.db, String(keyId));
      assert.equal((await env.app.inject({ url: `${path}?t=${ticket}` })).statusCode, 401);
      const other = await ticketFor(film);
      const r = await env.app.inject({ url: `${path}?t=${other.ticket}` });
      assert.equal(r.statusCode, 404, "the film's ticket does not open the series' file");
    });

    it('GET /media-ticket refuses an engagement-bound key and a key without read', async () => {
      const vendor = await env.mint({ production: 'nightfall', engagement: 'eng-pixel', scopes: ['read'] });
      assert.equal((await get(env.app, '/api/v1/media-ticket', vendor)).status, 403);
      const writer = await env.mint({ production: 'nightfall', scopes: ['write'] });
      assert.equal((await get(env.app, '/api/v1/media-ticket', writer)).status, 403);
      assert.equal((await get(env.app, '/api/v1/media-ticket')).status, 401);
    });

    it('paths escaping the media answer 404 without touching the filesystem', async () => {
      const { ticket } = await ticketFor(series);
      const stat = env.store.stat.bind(env.store);
      const open = env.store.open.bind(env.store);
      let touched = 0;
      env.store.stat = async (k) => (touched++, stat(k));
      env.store.open = async (k, r) => (touched++, open(k, r));
      await env.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = env.app.server.address() as AddressInfo;
      try {
        const real = await coatPath();
        const rest = real.slice('/media/'.length);
        for (const path of [
          `/media/../${rest}`,
          `/media/%2e%2e/${rest}`,
          `/media/%2E%2E/%2e%2e/etc/passwd`,
          `/media/x/..%2f..%2f${rest}`,
          `/media/%2fetc%2fpasswd`,
          `/media//etc/passwd`,
          `/media/${rest}%00.jpg`,
          `/media/./${rest}`,
          `/media/..%5c..%5cetc%5cpasswd`,
          `/media/C:%5cwindows`,
          `/media/no/such/file.jpg`,
        ]) {
          const r = await rawGet(port, `${path}?t=${ticket}`);
          assert.equal(r.status, 404, path);
          assert.equal(
            JSON.parse(r.body).detail.includes('not found') || /no route/.test(r.body),
            true,
            path,
          );
        }
        assert.equal(touched, 0, 'no refused path reached the media store');
        assert.equal((await rawGet(port, `${real}?t=${ticket}`)).status, 200);
      } finally {
        env.store.stat = stat;
        env.store.open = open;
      }
    });

    it('mediaRestOf keeps only plain relative paths', () => {
      assert.equal(mediaRestOf('/media/12/ab/c.jpg?t=x'), '12/ab/c.jpg');
      assert.equal(mediaRestOf('/media/a%20b.jpg'), 'a b.jpg');
      for (const bad of [
        '/media/',
        '/media/a/../b',
        '/media/%2e%2e/b',
        '/media/a//b',
        '/media/a%00',
        '/media/%E0%A4%A',
        '/x/y',
      ]) {
        assert.equal(mediaRestOf(bad), null, bad);
      }
    });

    it('no response of this file carries an email or a phone from the fixtures', () => {
      assert.deepEqual(
        get.seen.flatMap((x) => contactLeaks(x.body, demoContacts(), x.url)),
        [],
      );
    });
  });
}
