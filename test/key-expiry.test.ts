import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { authenticate, mintKey, parseExpiry } from '../src/auth/key-service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { prodgraphHere } from './support/cli.js';
import { call, get } from './support/http.js';
import { dbArgOf } from './support/server-process.js';

const A = '/api/v1/admin';
const DAY = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`keys that expire [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let admin: string;
    before(async () => {
      // a default lifetime for vendor keys, as a production server may set it
      env = await createEnv(dialect, { PRODGRAPH_VENDOR_KEY_DAYS: '30' });
      refs = (await env.import(smallProduction('exp'))).refs;
      admin = await env.mint({ production: 'exp', scopes: ['admin'] });
    });
    after(() => env.close());

    const post = (url: string, body: unknown) => call(env.app, 'POST', `${A}${url}`, { token: admin, body });
    /** Moves a key's expiry into the past, as time passing would (the test waits on no clock). */
    const expireNow = async (id: number) => {
      const at = new Date(Date.now() - 1000).toISOString();
      await env.handle.db.updateTable('api_keys').set({ expires_at: at }).where('id', '=', id).execute();
      return at;
    };

    it('mints with expires_at, works until then, and is refused after it with key_expired, cache or not', async () => {
      const expires = new Date(Date.now() + 7 * DAY).toISOString();
      const minted = await post('/keys', { label: 'farm', scopes: ['read'], expires_at: expires });
      assert.equal(minted.status, 201);
      assert.equal(minted.body.expires_at, expires);
      const token = minted.body.token as string;
      // used twice: the second time its token is already verified in memory
      assert.equal((await get(env.app, '/api/v1/production', token)).status, 200);
      assert.equal((await get(env.app, '/api/v1/production', token)).status, 200);
      const at = await expireNow(minted.body.id);
      const refused = await get(env.app, '/api/v1/production', token);
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, { detail: `expired on ${at}`, code: 'key_expired' });
      assert.match(String(refused.headers['www-authenticate']), /Bearer/);
      // the refusal names the expiry only to the token's holder: a wrong secret is just unknown
      const forged = `${token.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}`;
      assert.equal((await get(env.app, '/api/v1/production', forged)).body.code, 'unauthorized');
      // MCP takes the same door
      const mcp = await call(env.app, 'POST', '/mcp', {
        token,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        headers: { accept: 'application/json, text/event-stream' },
      });
      assert.equal(mcp.status, 401);
    });

    it("judges a key's expiry by the database's clock, not the host's: servers whose clocks drift agree", async () => {
      const minted = await post('/keys', {
        label: 'drift',
        scopes: ['read'],
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
      });
      const token = minted.body.token as string;
      const withHostClock = async (offsetMs: number) => {
        mock.timers.enable({ apis: ['Date'], now: Date.now() + offsetMs });
        try {
          return await get(env.app, '/api/v1/production', token);
        } finally {
          mock.timers.reset();
        }
      };
      assert.equal((await withHostClock(2 * 3600_000)).status, 200, 'a host two hours ahead still takes it');
      const at = await expireNow(minted.body.id);
      const behind = await withHostClock(-3600_000);
      assert.equal(behind.status, 401, 'a host an hour behind still refuses it');
      assert.deepEqual(behind.body, { detail: `expired on ${at}`, code: 'key_expired' });
    });

    it("an expired key's media tickets die with it", async () => {
      const minted = await post('/keys', {
        label: 'viewer',
        scopes: ['read'],
        expires_at: new Date(Date.now() + DAY).toISOString(),
      });
      const token = minted.body.token as string;
      const ticket = await get(env.app, '/api/v1/media-ticket', token);
      assert.equal(ticket.status, 200);
      const t = ticket.body.ticket as string;
      const probe = await get(env.app, `/media/nothing-here.png?t=${encodeURIComponent(t)}`);
      assert.equal(probe.status, 404, 'the ticket stands while the key does');
      await expireNow(minted.body.id);
      const after = await get(env.app, `/media/nothing-here.png?t=${encodeURIComponent(t)}`);
      assert.equal(after.status, 401);
    });

    it('refuses an expiry in the past or not a date (422, nothing minted)', async () => {
      const before = (await get(env.app, `${A}/keys`, admin)).body.length;
      const past = await post('/keys', { label: 'x', expires_at: '2001-01-01T00:00:00Z' });
      assert.equal(past.status, 422);
      assert.equal(past.body.code, 'invalid_field');
      assert.match(past.body.detail, /^expires_at: must be in the future/);
      const bad = await post('/keys', { label: 'x', expires_at: 'soon' });
      assert.equal(bad.status, 422);
      assert.match(bad.body.detail, /expires_at/);
      assert.equal((await get(env.app, `${A}/keys`, admin)).body.length, before);
    });

    it('a vendor key gets the default lifetime; null overrides it; a production-wide key has none', async () => {
      const vendor = await post('/keys', { label: 'pix', engagement_id: refs['eng-pix'] });
      const life = Date.parse(vendor.body.expires_at) - Date.now();
      assert.ok(life > 29 * DAY && life <= 30 * DAY, vendor.body.expires_at);
      const forever = await post('/keys', {
        label: 'pix2',
        engagement_id: refs['eng-pix'],
        expires_at: null,
      });
      assert.equal(forever.body.expires_at, null);
      const wide = await post('/keys', { label: 'wide' });
      assert.equal(wide.body.expires_at, null);
    });

    it('the key list shows expiry and last use (API and CLI)', async () => {
      const expires = new Date(Date.now() + 3 * DAY).toISOString();
      const minted = await post('/keys', { label: 'listed', scopes: ['read'], expires_at: expires });
      assert.equal((await get(env.app, '/api/v1/production', minted.body.token)).status, 200);
      // use is recorded in the background: wait for the row to show it
      let row;
      do {
        row = (await get(env.app, `${A}/keys`, admin)).body.find(
          (k: { id: number }) => k.id === minted.body.id,
        );
        if (!row.last_used_at) await new Promise((r) => setImmediate(r));
      } while (!row.last_used_at);
      assert.equal(row.expires_at, expires);
      assert.ok(Date.now() - Date.parse(row.last_used_at) < 60_000);
      const cli = await prodgraphHere(['keys', 'list', '--production', 'exp', '--json'], {
        PRODGRAPH_DB: dbArgOf(env),
        PRODGRAPH_MEDIA: env.config.mediaDir,
      });
      assert.equal(cli.code, 0, cli.stderr);
      const listed = JSON.parse(cli.stdout).find((k: { id: number }) => k.id === minted.body.id);
      assert.equal(listed.expires_at, expires);
      assert.equal(listed.last_used_at, row.last_used_at);
      const table = await prodgraphHere(['keys', 'list', '--production', 'exp'], {
        PRODGRAPH_DB: dbArgOf(env),
        PRODGRAPH_MEDIA: env.config.mediaDir,
      });
      assert.match(table.stdout, /EXPIRES/);
      assert.ok(table.stdout.includes(expires));
    });

    it('keys mint --expires takes a duration or a date, and the key is refused after it', async () => {
      const run = (args: string[]) =>
        prodgraphHere(['keys', 'mint', '--production', 'exp', '--json', ...args], {
          PRODGRAPH_DB: dbArgOf(env),
          PRODGRAPH_MEDIA: env.config.mediaDir,
        });
      const thirty = await run(['--label', 'd30', '--expires', '30d']);
      assert.equal(thirty.code, 0, thirty.stderr);
      const k = JSON.parse(thirty.stdout);
      assert.ok(Math.abs(Date.parse(k.expires_at) - (Date.now() + 30 * DAY)) < 60_000);
      assert.ok(await authenticate(env.handle.db, k.token));
      await expireNow(k.id);
      await assert.rejects(() => authenticate(env.handle.db, k.token), /expired on/);
      const dated = JSON.parse((await run(['--label', 'dated', '--expires', '2999-03-31'])).stdout);
      assert.equal(dated.expires_at, '2999-03-31T00:00:00.000Z');
      const vendorNever = await mintKey(env.handle.db, {
        production: 'exp',
        label: 'v',
        engagement: 'eng-pix',
        expiresAt: null,
        vendorKeyDays: 30,
      });
      assert.equal(vendorNever.expires_at, null);
      const refused = await run(['--label', 'bad', '--expires', 'tomorrow']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /--expires: "tomorrow" is neither a date/);
      const past = await run(['--label', 'old', '--expires', '2001-01-01']);
      assert.match(past.stderr, /must be in the future/);
    });
  });
}

describe('parseExpiry', () => {
  it('reads durations from now and dates as midnight UTC', () => {
    const now = Date.parse('2027-01-01T00:00:00Z');
    assert.equal(parseExpiry('12h', now), '2027-01-01T12:00:00.000Z');
    assert.equal(parseExpiry('2w', now), '2027-01-15T00:00:00.000Z');
    assert.equal(parseExpiry('2027-06-30', now), '2027-06-30T00:00:00.000Z');
    assert.equal(parseExpiry('2027-06-30T18:00:00+02:00', now), '2027-06-30T16:00:00.000Z');
    assert.throws(() => parseExpiry('30 days', now), /neither a date/);
    assert.throws(() => parseExpiry('12', now), /neither a date/);
  });
});
