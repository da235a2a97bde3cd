import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { serverTimeouts } from '../src/http/timeouts.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { get } from './support/http.js';
import { head, RawConnection } from './support/raw-http.js';
import { jpeg, upload } from './support/write.js';

/*
 * Slow clients are cut when the documented timeouts say (PRODGRAPH_HEADERS_TIMEOUT_MS, 30 s by
 * default; PRODGRAPH_REQUEST_TIMEOUT_MS for the whole request), not up to a checking interval
 * later; and every request a client gives up on is logged with its method, its URL (a ticket
 * redacted) and its status, or `aborted` when none was sent. The live cuts run with short
 * configured timeouts so the file stays quick.
 */

describe('the documented timeouts', () => {
  it('headers must arrive within 30 s by default, and a late client is cut within 5% of it', () => {
    const { timeouts } = loadConfig({}, {});
    assert.equal(timeouts.headersMs, 30_000);
    const server = serverTimeouts(timeouts);
    assert.equal(server.http.headersTimeout, 30_000);
    // Node cuts at its first look over the connections after the time is up
    assert.ok(
      server.http.connectionsCheckingInterval <= 30_000 * 0.05,
      `looked at every ${server.http.connectionsCheckingInterval} ms`,
    );
    assert.equal(server.requestTimeout, timeouts.requestMs);
    assert.equal(server.connectionTimeout, timeouts.idleMs);
  });
});

const HEADERS_MS = 1500;
const REQUEST_MS = 2500;
/** How late a cut may come: a twentieth of the timeout, and the event loop of a loaded machine. */
const lateBy = (ms: number) => ms / 20 + 600;

interface LogLine {
  msg: string;
  level: number;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  aborted?: boolean;
}

for (const dialect of DIALECTS) {
  describe(`slow and vanishing clients over a real port [${dialect}]`, () => {
    let env: TestEnv;
    let port: number;
    let key: string;
    let coat: number;
    const lines: LogLine[] = [];
    const written = new EventEmitter();

    /** The first log line that matches, waiting for it to be written (a line comes when the server sees the close, which may be after the client does). */
    async function lineFor(match: (l: LogLine) => boolean, what: string): Promise<LogLine> {
      const waiting = AbortSignal.timeout(REQUEST_MS * 4);
      for (;;) {
        const line = lines.find(match);
        if (line) return line;
        await once(written, 'line', { signal: waiting }).catch(() => {
          assert.fail(`no line for ${what} among ${JSON.stringify(lines.map((l) => l.msg))}`);
        });
      }
    }

    before(async () => {
      env = await createEnv(
        dialect,
        {
          PRODGRAPH_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
          PRODGRAPH_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
          PRODGRAPH_LOG_LEVEL: 'info',
        },
        {
          logStream: {
            write: (l) => {
              lines.push(JSON.parse(l) as LogLine);
              written.emit('line');
            },
          },
        },
      );
      coat = (await env.import(smallProduction('slow'))).refs['co-coat']!;
      key = await env.mint({ production: 'slow', scopes: ['read', 'write'] });
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      port = (env.app.server.address() as { port: number }).port;
    });
    after(() => env.close());

    /** Sends a byte every 100 ms until the server cuts the connection; how long that took, and what it answered. */
    async function trickle(first: string): Promise<{ ms: number; status: number | null }> {
      const conn = await RawConnection.open(port);
      const started = performance.now();
      conn.write(first);
      const dribble = setInterval(() => conn.write('x'), 100);
      try {
        await conn.closedWithin(REQUEST_MS * 4);
      } finally {
        clearInterval(dribble);
      }
      const ms = performance.now() - started;
      const status = await conn.answer(10).then(
        (a) => a.status,
        () => null,
      );
      return { ms, status };
    }

    it('headers trickled a byte at a time are cut with 408 when the headers timeout is up', async () => {
      const { ms, status } = await trickle('GET /api/v1/production HTTP/1.1\r\nHost: test\r\nX-Slow: ');
      assert.equal(status, 408);
      assert.ok(ms >= HEADERS_MS - 50, `cut early, after ${ms} ms`);
      assert.ok(ms <= HEADERS_MS + lateBy(HEADERS_MS), `cut after ${ms} ms, timeout ${HEADERS_MS} ms`);
    });

    it('a body trickled a byte at a time is cut with 408 when the request timeout is up, and logged with its method and URL as aborted', async () => {
      const { ms, status } = await trickle(
        head('POST', '/api/v1/assets', {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          'Content-Length': 100_000,
        }) + '{"label":"',
      );
      assert.equal(status, 408);
      assert.ok(ms >= REQUEST_MS - 50, `cut early, after ${ms} ms`);
      assert.ok(ms <= REQUEST_MS + lateBy(REQUEST_MS), `cut after ${ms} ms, timeout ${REQUEST_MS} ms`);
      const line = await lineFor(
        (l) => l.msg === 'request aborted' && l.req?.url === '/api/v1/assets',
        'the cut request',
      );
      assert.equal(line.req?.method, 'POST');
      assert.equal(line.aborted, true);
      assert.ok(
        !lines.some((l) => /storage unavailable/.test(l.msg)),
        'a client that went away is not a database outage',
      );
    });

    it('a download the client abandons is logged with method, redacted URL, its status and aborted', async () => {
      const big = Buffer.concat([await jpeg(31), Buffer.alloc(24 * 1024 * 1024, 7)]);
      const landed = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
        token: key,
        files: [{ name: 'big.jpg', bytes: big, type: 'image/jpeg' }],
      });
      assert.equal(landed.status, 201, landed.text);
      const path = (landed.body as { media_path: string }).media_path;
      const { ticket } = (await get(env.app, '/api/v1/media-ticket', key)).body as { ticket: string };
      const conn = await RawConnection.open(port);
      conn.socket.pause();
      conn.write(head('GET', `${path}?t=${encodeURIComponent(ticket)}`, {}));
      // the answer started; the client reads no further and hangs up
      await new Promise<void>((resolve) => conn.socket.once('readable', resolve));
      conn.destroy();
      const line = await lineFor((l) => l.msg === 'stream closed prematurely', 'the abandoned download');
      assert.equal(line.req?.method, 'GET');
      assert.equal(line.req?.url, `${path}?t=[redacted]`);
      assert.equal(line.res?.statusCode, 200);
      assert.equal(line.aborted, true);
      assert.ok(!JSON.stringify(lines).includes(ticket), 'the ticket reached a log line');
    });
  });
}
