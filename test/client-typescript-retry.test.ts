import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createClient, followChanges, type ProdgraphClient } from '../clients/typescript/src/index.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';

/**
 * What the faulty network does to one request: pass it on, drop the connection before or after
 * the server answered, or answer in the server's stead.
 */
type Fault = 'pass' | 'drop-before' | 'drop-after' | { status: number; retryAfter?: number };

/** A local HTTP proxy in front of the real server that injects the planned faults in turn. */
class FaultyProxy {
  readonly seen: Array<{ method: string; url: string; key: string | undefined; at: number }> = [];
  private plan: Fault[] = [];
  private server!: Server;
  url = '';

  constructor(private readonly upstream: string) {}

  /** The next requests meet these faults, in order; every one after them passes. */
  faults(...plan: Fault[]): void {
    this.plan = plan;
    this.seen.length = 0;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const fault = this.plan.shift() ?? 'pass';
      const key = req.headers['idempotency-key'] as string | undefined;
      this.seen.push({ method: req.method!, url: req.url!, key, at: Date.now() });
      if (fault === 'drop-before') return req.socket.destroy();
      if (typeof fault === 'object') {
        req.resume();
        const body = JSON.stringify({
          detail: 'injected',
          code: fault.status === 429 ? 'rate_limited' : 'unavailable',
        });
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
        return res.writeHead(fault.status, headers).end(body);
      }
      const up = httpRequest(
        `${this.upstream}${req.url}`,
        { method: req.method, headers: req.headers },
        (answer: IncomingMessage) => {
          if (fault === 'drop-after') {
            // the server has answered (and written): the client never hears it
            answer.resume();
            answer.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(up);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

for (const dialect of DIALECTS) {
  describe(`TypeScript client through a faulty network [${dialect}]`, () => {
    let env: TestEnv;
    let proxy: FaultyProxy;
    let client: ProdgraphClient;
    let direct: ProdgraphClient;
    let followerKey: string;

    before(async () => {
      env = await createEnv(dialect);
      await env.import(smallProduction('flaky'));
      const key = await env.mint({ production: 'flaky', scopes: ['read', 'write'] });
      followerKey = key;
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      const upstream = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
      proxy = await new FaultyProxy(upstream).start();
      client = createClient({ baseUrl: proxy.url, key, backoffMs: 20, maxBackoffMs: 100 });
      direct = createClient({ baseUrl: upstream, key });
    });
    after(async () => {
      await proxy.close();
      await env.close();
    });

    /** How many assets carry this label, asked of the server directly. */
    const count = async (label: string) =>
      (await direct.GET('/api/v1/assets')).data!.filter((a) => a.label === label).length;

    it('a write whose answer was lost is sent again with its key, replayed, and written once', async () => {
      proxy.faults('drop-after');
      const label = 'Lost answer';
      const r = await client.POST('/api/v1/assets', { body: { label } });
      assert.equal(r.response.status, 201, JSON.stringify(r.error));
      assert.equal(r.response.headers.get('idempotent-replayed'), 'true');
      assert.equal(proxy.seen.length, 2);
      assert.ok(proxy.seen[0]!.key, 'the write carried an Idempotency-Key');
      assert.equal(proxy.seen[1]!.key, proxy.seen[0]!.key, 'the retry carried the same key');
      assert.equal(await count(label), 1);
    });

    it('503 and 502 once each: retried, written once; two writes never share a key', async () => {
      proxy.faults({ status: 503 }, { status: 502 });
      const r = await client.POST('/api/v1/assets', { body: { label: 'Twice refused' } });
      assert.equal(r.response.status, 201);
      assert.equal(proxy.seen.length, 3);
      assert.equal(new Set(proxy.seen.map((s) => s.key)).size, 1);
      assert.equal(await count('Twice refused'), 1);
      const first = proxy.seen[0]!.key;
      proxy.faults();
      await client.POST('/api/v1/assets', { body: { label: 'Another' } });
      assert.ok(proxy.seen[0]!.key);
      assert.notEqual(proxy.seen[0]!.key, first);
    });

    it('429 waits Retry-After before asking again', async (t) => {
      proxy.faults({ status: 429, retryAfter: 1 });
      // the client's waits run on timers this test moves: the second request comes when the
      // Retry-After has passed on that clock, without a second of real waiting
      t.mock.timers.enable({ apis: ['setTimeout'] });
      const answer = client.GET('/api/v1/production');
      while (proxy.seen.length < 1) await new Promise((r) => setImmediate(r));
      let moved = 0;
      while (proxy.seen.length < 2) {
        await new Promise((r) => setImmediate(r));
        if (proxy.seen.length < 2) {
          t.mock.timers.tick(50);
          moved += 50;
        }
      }
      t.mock.timers.reset();
      const r = await answer;
      assert.equal(r.response.status, 200);
      assert.equal(proxy.seen.length, 2);
      assert.ok(moved >= 1000, `asked again after ${moved} ms of the client's clock, before the Retry-After`);
    });

    it('a read is retried after dropped connections; after the last retry the failure is the caller’s', async () => {
      proxy.faults('drop-before', 'drop-before');
      const r = await client.GET('/api/v1/scenes');
      assert.equal(r.response.status, 200);
      assert.equal(proxy.seen.length, 3);
      proxy.faults('drop-before', 'drop-before', 'drop-before', 'drop-before');
      await assert.rejects(client.GET('/api/v1/scenes'), TypeError);
      assert.equal(proxy.seen.length, 4, 'the first attempt and three retries');
      proxy.faults({ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
      const refused = await client.GET('/api/v1/scenes');
      assert.equal(refused.response.status, 503, 'the last answer is handed back');
    });

    it('followChanges resumes from its cursor after the connection drops, missing nothing', async () => {
      const head = (await direct.GET('/api/v1/changes', { params: { query: { after: 'now' } } })).data!
        .next_cursor;
      const made = await direct.POST('/api/v1/assets', { body: { label: 'Made while the line was down' } });
      // no retries of its own: the feed itself must come back
      const follower = createClient({ baseUrl: proxy.url, key: followerKey, retries: 0 });
      proxy.faults('drop-before', 'drop-before');
      const stop = new AbortController();
      const seen: number[] = [];
      for await (const change of followChanges(follower, {
        after: head,
        wait: 1,
        signal: stop.signal,
        backoffMs: 20,
      })) {
        if (change.kind === 'asset') seen.push(change.id);
        if (change.id === made.data!.node_id) stop.abort();
      }
      assert.deepEqual(seen, [made.data!.node_id]);
      assert.ok(proxy.seen.length >= 3, 'two dropped polls, then the one that answered');
    });

    it('a write the server does not replay is never sent twice after a dropped connection', async () => {
      proxy.faults('drop-after');
      // MCP takes no Idempotency-Key: a lost answer is the caller's to judge
      await assert.rejects(
        client.POST('/mcp', {
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          headers: { accept: 'application/json' },
        }),
        TypeError,
      );
      assert.equal(proxy.seen.length, 1);
      assert.equal(proxy.seen[0]!.key, undefined);
      // but a 429 was refused before anything ran, so it is retried whatever the method
      proxy.faults({ status: 429, retryAfter: 0 });
      const r = await client.POST('/mcp', {
        body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        headers: { accept: 'application/json' },
      });
      assert.equal(r.response.status, 200);
      assert.equal(proxy.seen.length, 2);
    });
  });
}
