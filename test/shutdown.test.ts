import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { multipart } from './support/multipart.js';
import { Factory } from './support/factory.js';
import { ALL_SCOPES, png } from './support/round-trip.js';
import { startServer } from './support/server-process.js';

/** Sends a body in two halves with a pause between, answering the status and body. */
function slowPost(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  onFirstHalf: () => void,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': body.length } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half), () => {
      onFirstHalf();
      setTimeout(() => req.end(body.subarray(half)), 1500);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`graceful shutdown [${dialect}]`, () => {
    let env: TestEnv;
    let coat: number;
    let key: string;
    let metricsKey: string;

    before(async () => {
      env = await createEnv(dialect);
      // one asset to upload versions to
      const make = new Factory(env.handle.db);
      const film = (await make.production({ code: 'film' })).id;
      coat = (await make.asset(film, { kind: 'costume', label: 'Mara coat' })).id;
      key = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      metricsKey = await env.mint({ production: 'film', scopes: ['metrics'] });
    });
    after(() => env.close());

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      it(`${signal}: an upload in flight completes, new connections are refused, the process exits 0`, async () => {
        // at debug a request is logged as it arrives, not only when answered
        const server = await startServer(env, { PRODGRAPH_LOG_LEVEL: 'debug' });
        const { payload, headers } = multipart([
          { name: 'note', value: `shutdown ${signal}` },
          { name: 'file', filename: 'v.png', content: await png('#0a0', 256) },
        ]);
        let signalled = false;
        // the signal goes once the server has taken the request in (its log says so), mid-body
        const upload = slowPost(
          `${server.url}/api/v1/assets/${coat}/versions`,
          { ...headers, authorization: `Bearer ${key}` },
          payload,
          () => {
            const taken = setInterval(() => {
              if (!server.output.some((l) => l.includes('incoming request') && l.includes('/versions')))
                return;
              clearInterval(taken);
              signalled = true;
              server.child.kill(signal);
            }, 20);
          },
        );
        const answer = await upload;
        // a server too slow to log before the body ended still gets its signal
        if (!signalled) server.child.kill(signal);
        assert.equal(answer.status, 201, answer.body);
        assert.equal(await server.exited, 0);
        assert.ok(server.output.some((l) => l.includes('shut down cleanly')));
        const row = await env.handle.db
          .selectFrom('versions')
          .where('note', '=', `shutdown ${signal}`)
          .select('id')
          .execute();
        assert.equal(row.length, 1, 'the upload that was in flight is stored');
        await assert.rejects(fetch(`${server.url}/healthz`), 'nothing listens any more');
      });
    }

    it('SIGTERM drains: /healthz answers 503 at once, requests are still served, a held long-poll answers its page, then the process exits', async () => {
      const drainMs = 4000;
      const server = await startServer(env, { PRODGRAPH_DRAIN_MS: String(drainMs) });
      const auth = { authorization: `Bearer ${key}` };
      const cursor = (
        (await (await fetch(`${server.url}/api/v1/changes?after=now`, { headers: auth })).json()) as {
          next_cursor: string;
        }
      ).next_cursor;
      const longPoll = fetch(`${server.url}/api/v1/changes?after=${cursor}&wait=30`, { headers: auth });
      for (;;) {
        const m = await fetch(`${server.url}/metrics`, {
          headers: { authorization: `Bearer ${metricsKey}` },
        }).then((r) => r.text());
        if (/^prodgraph_change_feed_waiters 1$/m.test(m)) break;
      }
      const signalled = performance.now();
      server.child.kill('SIGTERM');
      let health: Response;
      do health = await fetch(`${server.url}/healthz`);
      while (health.status === 200);
      assert.equal(health.status, 503);
      assert.equal(((await health.json()) as { code: string }).code, 'unavailable');
      assert.ok(health.headers.get('retry-after'));
      // still served while draining, each answer closing its connection
      const read = await fetch(`${server.url}/api/v1/production`, { headers: auth });
      assert.equal(read.status, 200);
      assert.equal(read.headers.get('connection'), 'close');
      // the held long-poll answers when the drain ends, with its page (nothing was written)
      const page = await longPoll;
      assert.ok(performance.now() - signalled >= drainMs - 50, 'held until the drain ended');
      assert.equal(page.status, 200);
      assert.deepEqual(((await page.json()) as { changes: unknown[] }).changes, []);
      assert.equal(await server.exited, 0);
      assert.ok(server.output.some((l) => l.includes('draining')));
      assert.ok(server.output.some((l) => l.includes('shut down cleanly')));
    });

    it('a second SIGTERM ends the drain at once', async () => {
      const server = await startServer(env, { PRODGRAPH_DRAIN_MS: '600000' });
      server.child.kill('SIGTERM');
      while ((await fetch(`${server.url}/healthz`)).status === 200);
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    });

    it('a request that outlives the shutdown timeout is cut, and the process still exits', async () => {
      const server = await startServer(env, { PRODGRAPH_SHUTDOWN_TIMEOUT_MS: '300' });
      const { payload, headers } = multipart([
        { name: 'file', filename: 'v.png', content: await png('#00a', 64) },
      ]);
      // the body never finishes: only the shutdown timeout ends it
      const stuck = new Promise<string>((resolve) => {
        const req = request(`${server.url}/api/v1/assets/${coat}/versions`, {
          method: 'POST',
          headers: { ...headers, authorization: `Bearer ${key}`, 'content-length': payload.length },
        });
        req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? 'error'));
        req.on('response', (res) => resolve(String(res.statusCode)));
        req.write(payload.subarray(0, 100), () => server.child.kill('SIGTERM'));
      });
      assert.equal(await server.exited, 0);
      assert.match(await stuck, /ECONNRESET|EPIPE|503|socket hang up/);
    });
  });
}
