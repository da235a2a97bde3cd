import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { DIALECTS, createEnv, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { loadDemo } from './support/read.js';
import { Receiver, until } from './support/receiver.js';
import { startServer, type ServerProcess } from './support/server-process.js';

/*
 * `prodgraph serve --workers 2`: two worker processes behind one port, each request on a new
 * connection (Node's cluster hands connections to the workers in turn), so every check below
 * crosses both. What must hold whatever worker answers: a revoked key or grant is refused on
 * the very next request, a rate limit counts once for the server, a webhook delivers each
 * change once, a long-poll in one worker wakes on a write in the other, a media ticket minted
 * by one opens files in the other, the metrics add up over both, a dead worker is replaced and
 * SIGTERM drains them all, then stops them cleanly.
 */

const LIMIT = 40;

interface Answer {
  status: number;
  body: unknown;
  text: string;
}

/** One request on a connection of its own. */
function call(server: ServerProcess, method: string, path: string, token?: string, body?: unknown) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      {
        method,
        agent: false,
        headers: {
          connection: 'close',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = undefined;
          try {
            parsed = text && res.headers['content-type']?.includes('json') ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on('error', reject);
    // a request never answered fails the test instead of holding it
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer to ${method} ${path} in 15 s`)));
    req.end(payload);
  });
}

/** The pids of the processes that logged a request for `path` since line `from` of the output. */
function answeredBy(server: ServerProcess, path: string, from = 0): Set<number> {
  const pids = new Set<number>();
  for (const line of server.output.slice(from)) {
    if (!line.includes('request completed') || !line.includes(`"url":"${path}`)) continue;
    pids.add((JSON.parse(line) as { pid: number }).pid);
  }
  return pids;
}

const workerPids = (server: ServerProcess): number[] =>
  server.output
    .filter((l) => l.includes('Server listening at'))
    .map((l) => (JSON.parse(l) as { pid: number }).pid);

for (const dialect of DIALECTS) {
  describe(`serve --workers 2 [${dialect}]`, () => {
    let env: TestEnv;
    let server: ServerProcess;
    let admin: string;
    let wide: string;
    let refs: Record<string, number>;
    let demo: Record<string, number>;
    const receiver = new Receiver();

    before(async () => {
      env = await createEnv(dialect);
      ({ refs } = await env.import(smallProduction('film')));
      demo = (await loadDemo(env, 'episodic')).refs;
      admin = await env.mint({ production: 'film', scopes: ['read', 'write', 'admin'] });
      wide = await env.mint({ production: 'film', scopes: ['read', 'write'] });
      await receiver.start();
      server = await startServer(env, {
        PRODGRAPH_WORKERS: '2',
        PRODGRAPH_RATE_LIMIT: String(LIMIT),
        PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32',
        PRODGRAPH_DRAIN_MS: '3000',
      });
    });

    after(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await receiver.close();
      await env?.close();
    });

    it('answers from both workers', async () => {
      const from = server.output.length;
      for (let i = 0; i < 6; i++) assert.equal((await call(server, 'GET', '/healthz')).status, 200);
      await until('the request lines', () => answeredBy(server, '/healthz', from).size === 2, 5_000);
      assert.deepEqual([...answeredBy(server, '/healthz', from)].sort(), workerPids(server).sort());
    });

    it('a key revoked through one worker is refused by every worker on the very next request', async () => {
      const key = await env.mint({ production: 'film', scopes: ['read'] });
      for (let i = 0; i < 4; i++)
        assert.equal((await call(server, 'GET', '/api/v1/production', key)).status, 200);
      const keys = (await call(server, 'GET', '/api/v1/admin/keys', admin)).body as Array<{
        id: number;
        prefix: string;
      }>;
      const id = keys.find((k) => key.startsWith(k.prefix))!.id;
      assert.equal((await call(server, 'POST', `/api/v1/admin/keys/${id}/revoke`, admin)).status, 200);
      for (let i = 0; i < 4; i++)
        assert.equal((await call(server, 'GET', '/api/v1/production', key)).status, 401);
    });

    it('a grant revoked through one worker is refused by every worker on the very next request', async () => {
      const vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read'] });
      const path = `/api/v1/bundles/scene/${refs.sc1}`;
      // kept by both workers first
      for (let i = 0; i < 4; i++) assert.equal((await call(server, 'GET', path, vendor)).status, 200);
      const grants = (await call(server, 'GET', '/api/v1/admin/grants', admin)).body as Array<{
        id: number;
        kind: string;
        node_id: number | null;
      }>;
      const grant = grants.find((g) => g.kind === 'scene' && g.node_id === refs.sc1)!;
      assert.equal(
        (await call(server, 'POST', `/api/v1/admin/grants/${grant.id}/revoke`, admin)).status,
        200,
      );
      for (let i = 0; i < 4; i++) assert.equal((await call(server, 'GET', path, vendor)).status, 404);
    });

    it('a rate limit counts once for the whole server', async () => {
      const key = await env.mint({ production: 'film', scopes: ['read'] });
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 6; i++)
        statuses.push((await call(server, 'GET', '/api/v1/production', key)).status);
      assert.equal(statuses.filter((s) => s === 200).length, LIMIT, statuses.join(' '));
      assert.ok(
        statuses.slice(LIMIT).every((s) => s === 429),
        statuses.join(' '),
      );
    });

    it('a webhook delivers each change once, whichever worker wrote it', async () => {
      const sub = await call(server, 'POST', '/api/v1/admin/webhooks', admin, { url: receiver.url });
      assert.equal(sub.status, 201, sub.text);
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await call(server, 'POST', '/api/v1/assets', wide, { label: `Worker prop ${i}` });
        assert.equal(r.status, 201, r.text);
        ids.push((r.body as { node_id: number }).node_id);
      }
      const wanted = ids.map((id) => `asset:${id}`);
      await until('every delivery', () => wanted.every((w) => receiver.lines().includes(w)));
      // the subscription's stored position past the last of them, and one attempt logged for
      // each: delivering is over, whoever delivered
      const head = (await call(server, 'GET', '/api/v1/changes?after=now', admin)).body as {
        next_cursor: string;
      };
      const id = (sub.body as { id: number }).id;
      await until('the subscription past every change', async () => {
        const listed = (await call(server, 'GET', '/api/v1/admin/webhooks', admin)).body as Array<{
          id: number;
          cursor: string;
        }>;
        return listed.find((w) => w.id === id)?.cursor === head.next_cursor;
      });
      const log = (await call(server, 'GET', `/api/v1/admin/webhooks/${id}/deliveries`, admin))
        .body as unknown[];
      assert.equal(log.length, wanted.length, 'one attempt logged for each change');
      for (const w of wanted) assert.equal(receiver.lines().filter((l) => l === w).length, 1, w);
    });

    it('a long-poll held by one worker wakes on a write committed by the other', async () => {
      const head = (await call(server, 'GET', '/api/v1/changes?after=now', admin)).body as {
        next_cursor: string;
      };
      // both workers hold a long-poll: whichever worker the write lands on, the other one waits
      const polls = [0, 1].map(() =>
        call(server, 'GET', `/api/v1/changes?after=${head.next_cursor}&wait=25`, admin),
      );
      // held, both of them: the server's metrics (summed over its workers) count two waiters
      const metricsKey = await env.mint({ production: 'film', scopes: ['metrics'] });
      await until('both long-polls held', async () =>
        /^prodgraph_change_feed_waiters 2$/m.test((await call(server, 'GET', '/metrics', metricsKey)).text),
      );
      const started = Date.now();
      const written = await call(server, 'POST', '/api/v1/assets', wide, { label: 'Woken' });
      assert.equal(written.status, 201);
      for (const poll of await Promise.all(polls)) {
        const page = poll.body as { changes: Array<{ kind: string; id: number }> };
        assert.ok(
          page.changes.some(
            (c) => c.kind === 'asset' && c.id === (written.body as { node_id: number }).node_id,
          ),
          poll.text,
        );
      }
      assert.ok(Date.now() - started < 20_000, 'woken by the write, not by the wait running out');
    });

    it('a media ticket minted by one worker opens files in every worker', async () => {
      // the demo series has stills on disk
      const series = await env.mint({ production: 'nightfall', scopes: ['read'] });
      const coat = (await call(server, 'GET', `/api/v1/assets/${demo['co-mara-coat']}`, series)).body as {
        versions: Array<{ released: boolean; media_path?: string | null }>;
      };
      const path = coat.versions.find((v) => v.released && v.media_path)!.media_path!;
      const { ticket } = (await call(server, 'GET', '/api/v1/media-ticket', series)).body as {
        ticket: string;
      };
      for (let i = 0; i < 4; i++) {
        const r = await call(server, 'GET', `${path}?t=${encodeURIComponent(ticket)}`);
        assert.equal(r.status, 200, r.text);
      }
    });

    it('GET /metrics answers the sum over both workers', async () => {
      const metricsKey = await env.mint({ production: 'film', scopes: ['metrics'] });
      const count = async () => {
        const text = (await call(server, 'GET', '/metrics', metricsKey)).text;
        return text
          .split('\n')
          .filter(
            (l) => l.startsWith('prodgraph_http_request_duration_seconds_count{') && l.includes('/healthz'),
          )
          .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
      };
      const before = await count();
      for (let i = 0; i < 10; i++) await call(server, 'GET', '/healthz');
      // whichever worker answers the scrape, it counts the requests the other answered too
      assert.equal(await count(), before + 10);
      assert.equal(await count(), before + 10);
    });

    it('a worker that dies is replaced, and the other answers meanwhile', async () => {
      const [victim] = workerPids(server);
      process.kill(victim!, 'SIGKILL');
      // a connection handed to the worker in the instant it died is lost with it, as in any
      // crash; once the primary has seen the death, every connection goes to a live worker
      await until('the primary to see the death', () =>
        server.output.some((l) => l.includes('died; starting another')),
      );
      for (let i = 0; i < 4; i++) assert.equal((await call(server, 'GET', '/healthz')).status, 200);
      await until('a replacement worker', () => workerPids(server).length === 3, 30_000);
      for (let i = 0; i < 4; i++) assert.equal((await call(server, 'GET', '/healthz')).status, 200);
    });

    it('SIGTERM drains every worker (/healthz 503, requests still served), then stops them and the primary, cleanly', async () => {
      const pids = workerPids(server);
      const from = server.output.length;
      server.child.kill('SIGTERM');
      // each worker drains: its /healthz answers 503 while it still serves
      await until(
        'both workers to drain',
        () =>
          server.output.slice(from).filter((l) => l.includes('draining: /healthz answers 503')).length === 2,
      );
      assert.equal((await call(server, 'GET', '/healthz')).status, 503);
      assert.equal((await call(server, 'GET', '/api/v1/production', admin)).status, 200);
      assert.equal(await server.exited, 0);
      for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/, `worker ${pid} still runs`);
    });
  });
}
