import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  createClient,
  DEFAULT_TIMEOUT_MS,
  TimeoutError,
  type ClientOptions,
} from '../clients/typescript/src/index.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';

/*
 * The TypeScript client's time limits against real sockets: a server that accepts and never
 * answers, one that sends an answer's head and then stalls, and the real server's long poll,
 * which must never be taken for a stall.
 */

/** A TCP server that accepts every connection, reads what comes, and never writes a byte (unless told to). */
class SilentServer {
  readonly connections: Socket[] = [];
  /** The request line each connection sent first (`POST /mcp HTTP/1.1`). */
  readonly requests: string[] = [];
  private server!: Server;
  url = '';

  constructor(private readonly onData?: (socket: Socket) => void) {}

  async start(): Promise<this> {
    this.server = createServer((socket) => {
      this.connections.push(socket);
      socket.on('error', () => undefined);
      socket.once('data', (chunk: Buffer) => {
        this.requests.push(chunk.toString('latin1').split('\r\n')[0]!);
        this.onData?.(socket);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const s of this.connections) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const client = (url: string, options: Partial<ClientOptions> = {}) =>
  createClient({
    baseUrl: url,
    key: 'pgk_test_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    backoffMs: 10,
    ...options,
  });

/** Runs `call`, which must reject with a TimeoutError of `kind`; answers the error and how long it took. */
async function timesOut(kind: TimeoutError['kind'], call: () => Promise<unknown>) {
  const started = Date.now();
  const err = await call().then(
    () => assert.fail('the call should have timed out'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof TimeoutError, `a TimeoutError, not ${String(err)}`);
  assert.equal(err.kind, kind);
  return { err, ms: Date.now() - started };
}

describe('TypeScript client time limits against a server that never answers', () => {
  let silent: SilentServer;
  before(async () => {
    silent = await new SilentServer().start();
  });
  after(() => silent.close());

  it('has a default per-attempt timeout of 30 s', () => {
    assert.equal(DEFAULT_TIMEOUT_MS, 30_000);
  });

  it('gives each attempt timeoutMs, retries a read, then rejects with a TimeoutError', async () => {
    const sent = () => silent.requests.filter((r) => r.startsWith('GET /api/v1/production ')).length;
    const before = sent();
    const { err, ms } = await timesOut('attempt', () =>
      client(silent.url, { timeoutMs: 800, retries: 2 }).GET('/api/v1/production'),
    );
    assert.match(err.message, /no answer within 800 ms/);
    assert.equal(sent() - before, 3, 'the first attempt and two retries');
    assert.ok(ms >= 2400 && ms < 8000, `${ms} ms`);
  });

  it('never sends a write without an Idempotency-Key twice: a timed-out MCP call is not retried', async () => {
    const sent = () => silent.requests.filter((r) => r.startsWith('POST /mcp ')).length;
    await timesOut('attempt', () =>
      // 1.5 s, not less: on a loaded machine the client's first request can take a few hundred
      // milliseconds to leave, and an attempt that timed out before sending proves nothing.
      client(silent.url, { timeoutMs: 1500, retries: 3 }).POST('/mcp', {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      }),
    );
    assert.equal(sent(), 1);
  });

  it('bounds an upload too: the wait for the answer once the file is sent', async () => {
    const file = new File([new Uint8Array(64 * 1024).fill(7)], 'plate.exr');
    await timesOut('attempt', () =>
      client(silent.url, { timeoutMs: 300, retries: 0 }).POST('/api/v1/turnovers/{id}/submissions', {
        params: { path: { id: 1 } },
        body: { files: [file] },
      }),
    );
  });

  it('bounds the whole call with deadlineMs, retries and pauses included', async () => {
    const before = silent.connections.length;
    const { err, ms } = await timesOut('deadline', () =>
      client(silent.url, { timeoutMs: 60_000, deadlineMs: 400, retries: 5 }).GET('/api/v1/production'),
    );
    assert.match(err.message, /deadline of 400 ms/);
    assert.equal(silent.connections.length - before, 1);
    assert.ok(ms >= 350 && ms < 3000, `${ms} ms`);
    // a deadline shorter than the next pause: the attempt's own timeout is the answer, at once
    const short = await timesOut('attempt', () =>
      client(silent.url, { timeoutMs: 200, backoffMs: 5000, deadlineMs: 2000 }).GET('/api/v1/production'),
    );
    assert.ok(short.ms < 1500, `${short.ms} ms`);
  });

  it("honours the caller's own signal as before", async () => {
    const err = await client(silent.url, { timeoutMs: 60_000 })
      .GET('/api/v1/production', { signal: AbortSignal.timeout(200) })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Error && !(err instanceof TimeoutError), String(err));
  });
});

describe('TypeScript client time limits on an answer that stalls', () => {
  let stalling: SilentServer;
  before(async () => {
    // the head and the first bytes of a JSON body, then nothing
    stalling = await new SilentServer((socket) =>
      socket.write(
        'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title": "Nig',
      ),
    ).start();
  });
  after(() => stalling.close());

  it('rejects when the body stops arriving for timeoutMs', async () => {
    const { ms } = await timesOut('attempt', () =>
      client(stalling.url, { timeoutMs: 300, retries: 0 }).GET('/api/v1/production'),
    );
    assert.ok(ms < 3000, `${ms} ms`);
  });
});

for (const dialect of DIALECTS) {
  describe(`TypeScript client time limits against the real server [${dialect}]`, () => {
    let env: TestEnv;
    let baseUrl: string;
    let key: string;
    before(async () => {
      env = await createEnv(dialect);
      await env.import(smallProduction('timed'));
      key = await env.mint({ production: 'timed', scopes: ['read'] });
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      baseUrl = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    });
    after(() => env.close());

    it("adds a long poll's wait to the attempt's timeout: a quiet feed is not a stall", async () => {
      const plain = createClient({ baseUrl, key });
      const now = await plain.GET('/api/v1/changes', { params: { query: { after: 'now', wait: 0 } } });
      const cursor = now.data!.next_cursor;
      // the server holds the answer 2 s, twice the attempt's timeout: the wait is added to it
      const polling = createClient({ baseUrl, key, timeoutMs: 1000, retries: 0 });
      const started = Date.now();
      const quiet = await polling.GET('/api/v1/changes', { params: { query: { after: cursor, wait: 2 } } });
      assert.equal(quiet.response.status, 200);
      assert.deepEqual(quiet.data!.changes, []);
      assert.ok(Date.now() - started >= 1900, 'the server held the answer for the wait');
      // and an ordinary call is answered as always
      const production = await plain.GET('/api/v1/production');
      assert.equal(typeof production.data!.title, 'string');
    });
  });
}
