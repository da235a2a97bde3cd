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

    before(async () => {
      env = await createEnv(dialect);
      // one asset to upload versions to
      const make = new Factory(env.handle.db);
      const film = (await make.production({ code: 'film' })).id;
      coat = (await make.asset(film, { kind: 'costume', label: 'Mara coat' })).id;
      key = await env.mint({ production: 'film', scopes: ALL_SCOPES });
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
