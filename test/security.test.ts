import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../src/keys/tokens.js';
import { revokeKey } from '../src/keys/service.js';
import { issueTicket } from '../src/modules/media-ticket/ticket.js';
import { redactUrl } from '../src/http/logging.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { loadDemo } from './support/read.js';

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
      for (const r of requests) await env.app.inject(r);
      assert.ok(lines.length >= requests.length * 2, `every request logged (${lines.length} lines)`);
      for (const line of lines) {
        for (const secret of secrets) assert.ok(!line.includes(secret), `a secret in: ${line}`);
        // the signature part alone is the secret of a ticket
        assert.ok(!line.includes(ticket.split('.')[3]!), `a ticket signature in: ${line}`);
        assert.ok(!/Bearer /i.test(line), `an Authorization value in: ${line}`);
      }
      assert.ok(
        lines.some((l) => l.includes('t=[redacted]')),
        'the ticket parameter is logged as redacted',
      );
      console.log(`# log lines searched [${dialect}]: ${lines.length}`);
    });

    it('redactUrl censors every spelling of the ticket parameter and keeps the rest', () => {
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
}
