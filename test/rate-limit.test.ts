import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { startServer } from './support/server-process.js';

for (const dialect of DIALECTS) {
  describe(`rate limits per key [${dialect}]`, () => {
    let env: TestEnv;
    let a: string;
    let b: string;

    before(async () => {
      env = await createEnv(dialect, { PRODGRAPH_RATE_LIMIT: '5', PRODGRAPH_RATE_LIMIT_WINDOW_MS: '60000' });
      await new Factory(env.handle.db).production({ code: 'film' });
      a = await env.mint({ production: 'film' });
      b = await env.mint({ production: 'film' });
    });
    after(() => env.close());

    const get = (token: string, url = '/api/v1/production') =>
      env.app.inject({ url, headers: { authorization: `Bearer ${token}` } });

    it('every answer carries RateLimit-Limit/-Remaining/-Reset; over the limit: 429 {detail} with Retry-After', async () => {
      for (let i = 0; i < 5; i++) {
        const r = await get(a, i % 2 ? '/api/v1/assets/999999' : '/api/v1/production');
        assert.equal(r.headers['ratelimit-limit'], '5');
        assert.equal(r.headers['ratelimit-remaining'], String(4 - i));
        assert.ok(Number(r.headers['ratelimit-reset']) > 0 && Number(r.headers['ratelimit-reset']) <= 60);
      }
      const over = await get(a);
      assert.equal(over.statusCode, 429);
      assert.equal(over.json().code, 'rate_limited');
      assert.match(over.json().detail, /at most 5 requests/);
      const retry = Number(over.headers['retry-after']);
      assert.ok(retry >= 1 && retry <= 60, String(retry));
      // another key has its own allowance
      assert.equal((await get(b)).statusCode, 200);
      // health probes are never limited
      for (let i = 0; i < 7; i++) assert.equal((await env.app.inject({ url: '/healthz' })).statusCode, 200);
    });

    it('unknown keys cannot spend a real key’s allowance (401 is answered before counting)', async () => {
      for (let i = 0; i < 8; i++) {
        const r = await env.app.inject({
          url: '/api/v1/production',
          headers: { authorization: 'Bearer nope' },
        });
        assert.equal(r.statusCode, 401);
      }
      assert.equal((await get(b)).headers['ratelimit-remaining'], '3');
    });

    it('off with PRODGRAPH_RATE_LIMIT=off: no limit, no headers', async () => {
      const off = await createEnv(dialect, { PRODGRAPH_RATE_LIMIT: 'off' });
      try {
        await new Factory(off.handle.db).production({ code: 'film' });
        const k = await off.mint({ production: 'film' });
        for (let i = 0; i < 8; i++) {
          const r = await off.app.inject({
            url: '/api/v1/production',
            headers: { authorization: `Bearer ${k}` },
          });
          assert.equal(r.statusCode, 200);
          assert.equal(r.headers['ratelimit-limit'], undefined);
        }
      } finally {
        await off.close();
      }
    });

    if (dialect === 'postgres') {
      /** Two `prodgraph serve` processes on the test's database with `limit`, stopped after `run`. */
      const onTwoServers = async (limit: string, run: (urls: [string, string]) => Promise<void>) => {
        const env2 = { PRODGRAPH_RATE_LIMIT: limit };
        const [one, two] = await Promise.all([startServer(env, env2), startServer(env, env2)]);
        try {
          await run([one.url, two.url]);
        } finally {
          one.child.kill('SIGTERM');
          two.child.kill('SIGTERM');
          await Promise.all([one.exited, two.exited]);
        }
      };

      it('two server processes on one PostgreSQL database share one window per key', async () => {
        await onTwoServers('6', async ([one, two]) => {
          const k = await env.mint({ production: 'film' });
          const statuses: number[] = [];
          for (let i = 0; i < 8; i++) {
            const r = await fetch(`${i % 2 ? one : two}/api/v1/production`, {
              headers: { authorization: `Bearer ${k}` },
            });
            statuses.push(r.status);
            await r.arrayBuffer();
          }
          assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429]);
        });
      });

      it('one process counts a burst exactly, and writes the window once per block, not per request', async () => {
        const burst = await createEnv(dialect, {
          PRODGRAPH_RATE_LIMIT: '6400',
          PRODGRAPH_RATE_LIMIT_WINDOW_MS: '60000',
        });
        try {
          await new Factory(burst.handle.db).production({ code: 'film' });
          const k = await burst.mint({ production: 'film' });
          const ask = () =>
            burst.app.inject({ url: '/api/v1/production', headers: { authorization: `Bearer ${k}` } });
          const before = burst.queries.sql.filter((q) => q.includes('rate_limits')).length;
          const first = await Promise.all(Array.from({ length: 50 }, ask));
          const remaining = first.map((r) => Number(r.headers['ratelimit-remaining'])).sort((a, b) => a - b);
          // fifty requests at once: fifty distinct counts, each answered once
          assert.deepEqual(
            remaining,
            Array.from({ length: 50 }, (_, i) => 6400 - 50 + i),
          );
          const upserts = burst.queries.sql.filter((q) => q.includes('rate_limits')).length - before;
          assert.ok(upserts <= 1, `${upserts} writes of the window for 50 requests`);
          // spend the rest: exactly the limit is answered, then 429 from memory
          let ok = 50;
          let refused = 0;
          while (refused < 20) {
            const batch = await Promise.all(Array.from({ length: 100 }, ask));
            ok += batch.filter((r) => r.statusCode === 200).length;
            refused += batch.filter((r) => r.statusCode === 429).length;
          }
          assert.equal(ok, 6400);
          const writes = burst.queries.sql.filter((q) => q.includes('rate_limits')).length - before;
          assert.ok(writes < 640, `${writes} writes of the window for ${ok + refused} requests`);
        } finally {
          await burst.close();
        }
      });

      it('two processes: a key is refused no earlier than its limit less one block of what was left', async () => {
        await onTwoServers('1280', async ([one, two]) => {
          const k = await env.mint({ production: 'film' });
          const statuses: number[] = [];
          // twice the limit at most, so a store that never refuses fails here instead of looping
          while (!statuses.includes(429) && statuses.length < 2 * 1280) {
            const answers = await Promise.all(
              Array.from({ length: 20 }, (_, i) =>
                fetch(`${i % 2 ? one : two}/api/v1/production`, {
                  headers: { authorization: `Bearer ${k}` },
                }).then(async (r) => (await r.arrayBuffer(), r.status)),
              ),
            );
            statuses.push(...answers);
          }
          const ok = statuses.filter((s) => s === 200).length;
          // each process takes at most 1/64 of what is left per block: 20 of 1,280 at most unused
          assert.ok(statuses.includes(429), `no 429 in ${statuses.length} requests`);
          assert.ok(ok >= 1280 - 20 && ok <= 1280, `${ok} answered`);
        });
      });
    }
  });
}
