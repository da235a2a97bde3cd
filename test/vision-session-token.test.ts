import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call } from './support/http.js';

const CREDENTIAL = 'sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const MODELS = 'image-standard,video-standard';

type Mode = 'ok' | 'slow' | 'fail' | 'html' | 'no-token' | 'expired' | 'redirect' | 'huge';

/**
 * A stand-in for a hosted provider's "mint a client token" endpoint: it checks the credential
 * and the requested model like the real thing, and misbehaves on demand.
 */
class ProviderStandIn {
  mode: Mode = 'ok';
  readonly seen: Array<{ authorization: string | undefined; body: { model?: string; expires_in?: number } }> =
    [];
  private server!: Server;
  private minted = 0;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/auth/tokens`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw || '{}');
    this.seen.push({ authorization: req.headers.authorization, body });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.headers.authorization !== `Bearer ${CREDENTIAL}`) {
      return json(401, { error: `bad credential ${req.headers.authorization}` });
    }
    if (!MODELS.split(',').includes(body.model)) return json(400, { error: 'unknown model' });
    switch (this.mode) {
      case 'slow':
        setTimeout(() => json(200, { token: 'late' }), 6000).unref();
        return;
      case 'fail':
        // a careless provider echoing secrets in its error page
        return json(500, { error: `internal error for key ${CREDENTIAL}`, trace: 'at mint (tokens.py:42)' });
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<html><body>Maintenance. key=${CREDENTIAL}</body></html>`);
        return;
      case 'no-token':
        return json(200, { ok: true });
      case 'redirect':
        res.writeHead(307, { location: 'http://127.0.0.1:9/elsewhere' });
        res.end();
        return;
      case 'huge':
        return json(200, { token: 'tok_big', padding: 'x'.repeat(100_000) });
      case 'expired':
        return json(200, { token: 'tok_old', expires_at: '2001-01-01T00:00:00Z' });
      default:
        this.minted++;
        return json(200, { token: `tok_${body.model}_${this.minted}`, expires_in: body.expires_in });
    }
  }
}

/** A port nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const { port } = s.address() as AddressInfo;
  await new Promise((done) => s.close(done));
  return port;
}

const mint = (app: App, token: string | undefined, body?: unknown, headers?: Record<string, string>) =>
  call(app, 'POST', '/api/v1/vision/session-token', { token, body, headers });

for (const dialect of DIALECTS) {
  describe(`POST /vision/session-token [${dialect}]`, () => {
    const provider = new ProviderStandIn();
    const logs: string[] = [];
    let env: TestEnv;
    /** Apps on the same database with another provider configuration. */
    const others: App[] = [];
    let n = 0;
    /** A fresh production-wide read key: each test has its own rate-limit budget. */
    const key = () => env.mint({ production: 'film', label: `Cart ${++n}`, scopes: ['read'] });

    const appWith = async (vision: NodeJS.ProcessEnv): Promise<App> => {
      const config = loadConfig({ db: ':memory:', media: env.config.mediaDir }, vision);
      const app = await buildApp({
        config: { ...config, db: env.config.db },
        database: env.handle,
        store: env.store,
        logStream: { write: (line) => void logs.push(line) },
      });
      others.push(app);
      return app;
    };

    before(async () => {
      await provider.start();
      env = await createEnv(
        dialect,
        {
          PRODGRAPH_VISION_TOKEN_URL: provider.url,
          PRODGRAPH_VISION_CREDENTIAL: CREDENTIAL,
          PRODGRAPH_VISION_PROVIDER: 'stand-in',
          // short enough to test, long enough that a loaded machine does not time out a prompt answer
          PRODGRAPH_VISION_TIMEOUT_MS: '2000',
          PRODGRAPH_VISION_MINTS_PER_MINUTE: '4',
          PRODGRAPH_LOG_LEVEL: 'trace',
        },
        { logStream: { write: (line) => void logs.push(line) } },
      );
      const make = new Factory(env.handle.db);
      const film = (await make.production({ code: 'film' })).id;
      const pix = await make.organisation(film, { name: 'Pixelworks Ltd' });
      await make.engagement(film, pix.id, { ref: 'eng-pix' });
    });
    after(async () => {
      for (const app of others) await app.close();
      await env.close();
      await provider.stop();
    });

    it('mints a token for the default model when there is no body, and for the other model on request', async () => {
      const token = await key();
      const started = Date.now();
      const first = await mint(env.app, token);
      const answered = Date.now();
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.model, 'image-standard');
      assert.equal(first.body.provider, 'stand-in');
      assert.match(first.body.token, /^tok_image-standard_\d+$/);
      // 300 s from the moment of minting, which lies between the request and its answer.
      const expires = Date.parse(first.body.expires_at);
      assert.ok(
        expires > started + 295_000 && expires <= answered + 301_000,
        `${expires - started} ms after the request, ${expires - answered} ms after the answer`,
      );
      assert.equal(first.headers['cache-control'], 'no-store');
      assert.deepEqual(provider.seen.at(-1), {
        authorization: `Bearer ${CREDENTIAL}`,
        body: { model: 'image-standard', expires_in: 300 },
      });

      const video = await mint(env.app, token, { model: 'video-standard' });
      assert.equal(video.status, 200, video.text);
      assert.equal(video.body.model, 'video-standard');
      assert.equal(provider.seen.at(-1)!.body.model, 'video-standard');

      // a JSON content type with nothing after it is no body, as browsers send it
      const empty = await mint(env.app, token, '', { 'content-type': 'application/json' });
      assert.equal(empty.status, 200, empty.text);
      assert.equal(empty.body.model, 'image-standard');
      const blank = await mint(env.app, token, {});
      assert.equal(blank.body.model, 'image-standard');
    });

    it('records each mint in the activity feed: who and which model', async () => {
      const token = await key();
      const label = `Cart ${n}`;
      await mint(env.app, token, { model: 'video-standard' });
      const feed = await env.handle.db
        .selectFrom('activity')
        .where('actor', '=', label)
        .select(['verb', 'summary', 'api_key_id'])
        .execute();
      assert.deepEqual(
        feed.map((a) => [a.verb, a.summary]),
        [['minted vision token', 'session token for model video-standard']],
      );
      assert.ok(feed[0]!.api_key_id !== null);
    });

    it('refuses a model outside the two allowed (naming them), unknown fields and bad JSON, minting nothing', async () => {
      const token = await key();
      const before = provider.seen.length;
      const wrong = await mint(env.app, token, { model: 'gpt-image-1' });
      assert.equal(wrong.status, 422);
      assert.equal(wrong.body.detail, 'model: must be one of image-standard, video-standard');
      const extra = await mint(env.app, token, { model: 'image-standard', seed: 4 });
      assert.equal(extra.status, 422);
      assert.match(extra.body.detail, /seed: unknown field/);
      for (const body of [{ model: 7 }, { model: null }, [], 'null']) {
        const r = await mint(env.app, token, typeof body === 'string' ? body : JSON.stringify(body), {
          'content-type': 'application/json',
        });
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      }
      const broken = await mint(env.app, token, '{"model": ', { 'content-type': 'application/json' });
      assert.equal(broken.status, 400);
      assert.equal(provider.seen.length, before);
    });

    it('refuses without a key (401), a vendor key and a key without read (403)', async () => {
      assert.equal((await mint(env.app, undefined)).status, 401);
      const vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read'] });
      const v = await mint(env.app, vendor);
      assert.equal(v.status, 403);
      assert.match(v.body.detail, /vendor engagement/);
      const writeOnly = await env.mint({ production: 'film', scopes: ['write'] });
      const w = await mint(env.app, writeOnly);
      assert.equal(w.status, 403);
      assert.match(w.body.detail, /"read"/);
    });

    it('limits mints per key: 429 with Retry-After once the minute is spent, other keys unaffected', async () => {
      const token = await key();
      for (let i = 0; i < 4; i++) {
        const r = await mint(env.app, token);
        assert.equal(r.status, 200);
        assert.equal(r.headers['ratelimit-remaining'], String(3 - i));
      }
      const over = await mint(env.app, token);
      assert.equal(over.status, 429);
      assert.match(over.body.detail, /at most 4 vision session tokens a minute; retry in \d+ s/);
      const retryAfter = Number(over.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, String(over.headers['retry-after']));
      assert.equal((await mint(env.app, await key())).status, 200);
    });

    it('answers 503 saying what to configure when there is no provider', async () => {
      const app = await appWith({});
      const r = await mint(app, await key());
      assert.equal(r.status, 503);
      assert.match(r.body.detail, /PRODGRAPH_VISION_TOKEN_URL and PRODGRAPH_VISION_CREDENTIAL/);
      // the model is still checked first: a bad request stays a bad request
      assert.equal((await mint(app, await key(), { model: 'nope' })).status, 422);
    });

    it('answers 502 when the provider is down, slow, failing, or answering garbage, never passing its body on', async () => {
      const down = await appWith({
        PRODGRAPH_VISION_TOKEN_URL: `http://127.0.0.1:${await closedPort()}/tokens`,
        PRODGRAPH_VISION_CREDENTIAL: CREDENTIAL,
      });
      const unreachable = await mint(down, await key());
      assert.equal(unreachable.status, 502);
      assert.equal(unreachable.body.detail, 'the vision provider could not be reached');

      const wrongCredential = await appWith({
        PRODGRAPH_VISION_TOKEN_URL: provider.url,
        PRODGRAPH_VISION_CREDENTIAL: 'sk-not-the-one',
      });
      const refused = await mint(wrongCredential, await key());
      assert.equal(refused.status, 502);
      assert.equal(refused.body.detail, 'the vision provider refused the request (HTTP 401)');

      const cases: Array<[Mode, string]> = [
        ['slow', 'the vision provider did not answer within 2000 ms'],
        ['fail', 'the vision provider refused the request (HTTP 500)'],
        ['html', 'the vision provider answered with something other than JSON'],
        ['no-token', 'the vision provider answered without a usable token'],
        ['expired', 'the vision provider answered with an unusable expiry'],
        ['redirect', 'the vision provider answered with a redirect, which is not followed'],
        ['huge', 'the vision provider answered with an oversized body'],
      ];
      try {
        for (const [mode, detail] of cases) {
          provider.mode = mode;
          const started = Date.now();
          const r = await mint(env.app, await key());
          assert.equal(r.status, 502, `${mode}: ${r.text}`);
          assert.deepEqual(r.body, { detail, code: 'upstream_failed' }, mode);
          // cut at the 2 s timeout, never waiting for the slow provider's 6 s
          assert.ok(Date.now() - started < 4000, `${mode} took ${Date.now() - started} ms`);
        }
      } finally {
        provider.mode = 'ok';
      }
      const minted = await env.handle.db
        .selectFrom('activity')
        .where('verb', '=', 'minted vision token')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      assert.ok(Number(minted.n) > 0);
    });

    it('never lets the credential into a response or a log line', async () => {
      const bodies: string[] = [];
      const token = await key();
      for (const mode of ['ok', 'fail', 'html'] as const) {
        provider.mode = mode;
        bodies.push((await mint(env.app, token)).text);
      }
      provider.mode = 'ok';
      for (const text of bodies) assert.ok(!text.includes(CREDENTIAL));
      const log = logs.join('');
      assert.ok(log.length > 0, 'the app logged');
      assert.match(log, /vision provider could not mint a session token/);
      assert.ok(!log.includes(CREDENTIAL), 'the credential is in the log');
      assert.ok(!log.includes('sk-not-the-one'), 'a credential is in the log');
      assert.ok(!log.includes('tokens.py'), "the provider's body is in the log");
    });
  });
}
