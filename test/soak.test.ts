import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { multipart } from './support/multipart.js';
import { ALL_SCOPES, importRoundTrip, png } from './support/round-trip.js';
import { startServer, type ServerProcess } from './support/server-process.js';

/**
 * A bounded soak on loopback against a real server process: many connections mixing reads,
 * conditional reads, writes, event replays, submissions, key and grant revocations. Seconds
 * per database: PRODGRAPH_SOAK_SECONDS (default 3, enough for every step to run many times in
 * the suite; raise it by hand for a real soak).
 */
const SECONDS = Number(process.env.PRODGRAPH_SOAK_SECONDS ?? 3);
const WORKERS = 12;
/** RSS samples: every 500 ms on a long soak, at least 30 over a short one (the flatness check needs them). */
const SAMPLE_MS = Math.min(500, (SECONDS * 1000) / 30);

const rssOf = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
};

for (const dialect of DIALECTS) {
  describe(`load with faults [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let admin: string;
    let vendor: string;
    let server: ServerProcess;
    let image: Buffer;

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      admin = await env.mint({ production: 'film', scopes: [...ALL_SCOPES, 'admin'] });
      vendor = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      image = await png('#456', 32);
      server = await startServer(env, { PRODGRAPH_RATE_LIMIT: 'off' });
    });
    after(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
      await env.close();
    });

    it('zero 5xx, every refusal a {detail}, no lost write, revocations effective at once, flat memory', async () => {
      const base = server.url;
      const auth = (t: string) => ({ authorization: `Bearer ${t}` });
      const stats = { requests: 0, errors5xx: 0, refusals: 0, notModified: 0 };
      const acked: string[] = [];
      const problems: string[] = [];
      const call = async (url: string, init: RequestInit = {}, expect?: number[]) => {
        const r = await fetch(`${base}${url}`, init);
        stats.requests++;
        const text = await r.text();
        if (r.status >= 500) {
          stats.errors5xx++;
          problems.push(`${init.method ?? 'GET'} ${url}: ${r.status} ${text}`);
        } else if (r.status === 304) stats.notModified++;
        else if (r.status >= 400) {
          stats.refusals++;
          let detail: unknown;
          try {
            detail = JSON.parse(text).detail;
          } catch {
            detail = undefined;
          }
          if (typeof detail !== 'string') problems.push(`${url}: ${r.status} without {detail}: ${text}`);
        }
        if (expect && !expect.includes(r.status)) problems.push(`${url}: ${r.status}, expected ${expect}`);
        return { status: r.status, headers: r.headers, body: text };
      };
      const post = (url: string, token: string, body: unknown, idem: string = randomUUID()) =>
        call(url, {
          method: 'POST',
          headers: { ...auth(token), 'content-type': 'application/json', 'idempotency-key': idem },
          body: JSON.stringify(body),
        });

      const eventBatch = {
        filespace: 'film-fs',
        events: [
          {
            event_type: 'create',
            path: 'soak/replayed.exr',
            source: 'scan',
            dedupe_key: 'soak-replay',
            detected_at: new Date().toISOString(),
          },
        ],
      };
      const scene = refs['sc1']!;
      let grantBusy = false;
      const none = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-none' });
      // every credential the run handles, searched for in every line the server logs
      const secrets = new Set([admin, vendor, none]);
      const coatMedia = (
        await env.handle.db
          .selectFrom('versions')
          .innerJoin('media', 'media.id', 'versions.media_id')
          .where('versions.node_id', '=', refs['co-coat']!)
          .select('media.storage_key')
          .executeTakeFirstOrThrow()
      ).storage_key;
      const mediaPath = `/media/${coatMedia.slice(coatMedia.indexOf('/') + 1)}`;
      const steps: Array<() => Promise<unknown>> = [
        () => call('/api/v1/production', { headers: auth(admin) }, [200]),
        () => call('/api/v1/assets?department=costume', { headers: auth(admin) }, [200]),
        async () => {
          const first = await call(`/api/v1/bundles/scene/${scene}`, { headers: auth(vendor) }, [200]);
          const etag = first.headers.get('etag');
          if (etag)
            await call(
              `/api/v1/bundles/scene/${scene}`,
              { headers: { ...auth(vendor), 'if-none-match': etag } },
              [200, 304],
            );
        },
        async () => {
          const text = `soak ${randomUUID()}`;
          const r = await post(`/api/v1/assets/${refs['co-coat']}/notes`, admin, { text });
          if (r.status === 201) acked.push(text);
        },
        () => post('/api/v1/storage/events', admin, eventBatch, 'soak-replay-key'),
        async () => {
          const { payload, headers } = multipart([
            { name: 'title', value: `soak ${randomUUID()}` },
            { name: 'files', filename: 'a.png', content: image },
          ]);
          await call(
            `/api/v1/turnovers/${refs['dl-plates']}/submissions`,
            { method: 'POST', headers: { ...auth(vendor), ...headers }, body: payload },
            [200],
          );
        },
        () => call('/api/v1/assets/999999', { headers: auth(admin) }, [404]),
        async () => {
          // a media ticket, used in its URL: the ticket must never reach the log
          const { ticket } = JSON.parse(
            (await call('/api/v1/media-ticket', { headers: auth(admin) }, [200])).body,
          );
          secrets.add(ticket);
          await call(`${mediaPath}?t=${ticket}`, {}, [200]);
        },
        () => call('/api/v1/production', { headers: auth('pgk_nothere') }, [401]),
        async () => {
          // a key minted, used, revoked: refused on the very next request
          const minted = JSON.parse((await post('/api/v1/admin/keys', admin, { label: 'soak' })).body);
          secrets.add(minted.token);
          await call('/api/v1/production', { headers: auth(minted.token) }, [200]);
          await post(`/api/v1/admin/keys/${minted.id}/revoke`, admin, {});
          await call('/api/v1/production', { headers: auth(minted.token) }, [401]);
        },
        // one grant cycle at a time (the engagement is shared); the other connections read meanwhile
        async () => {
          if (grantBusy) return call('/api/v1/people', { headers: auth(admin) }, [200]);
          grantBusy = true;
          try {
            // a grant given, used, revoked: the scene answers 404 on the very next request
            const given = await post('/api/v1/admin/grants', admin, {
              engagement_id: refs['eng-none'],
              kind: 'scene',
              node_id: scene,
            });
            const grant = JSON.parse(given.body) as { id: number };
            await call(`/api/v1/bundles/scene/${scene}`, { headers: auth(none) }, [200]);
            await post(`/api/v1/admin/grants/${grant.id}/revoke`, admin, {});
            await call(`/api/v1/bundles/scene/${scene}`, { headers: auth(none) }, [404]);
          } finally {
            grantBusy = false;
          }
        },
      ];

      const rss: number[] = [];
      const sampler = setInterval(() => rss.push(rssOf(server.child.pid!)), SAMPLE_MS);
      const deadline = Date.now() + SECONDS * 1000;
      let n = 0;
      try {
        await Promise.all(
          Array.from({ length: WORKERS }, async () => {
            while (Date.now() < deadline) await steps[n++ % steps.length]!();
          }),
        );
      } finally {
        clearInterval(sampler);
      }

      assert.deepEqual(problems.slice(0, 10), [], `${problems.length} problems`);
      assert.equal(stats.errors5xx, 0);
      // the server writes its log in batches (at most 100 ms apart): let the last one arrive
      for (let waited = 0; server.output.length < stats.requests && waited < 2000; waited += 50) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const lines = server.output.length;
      assert.ok(lines >= stats.requests, `the server logged every request (${lines} lines)`);
      for (const line of server.output) {
        for (const secret of secrets) assert.ok(!line.includes(secret), `a secret in a log line: ${line}`);
        assert.ok(!/Bearer /i.test(line), `an Authorization value in a log line: ${line}`);
      }
      const notes = await env.handle.db
        .selectFrom('version_notes')
        .where('text', 'like', 'soak %')
        .select('text')
        .execute();
      const stored = new Set(notes.map((r) => r.text));
      assert.deepEqual(
        acked.filter((t) => !stored.has(t)),
        [],
        'no acknowledged write is lost',
      );
      // memory: after warm-up, the last third of the samples is not above the first third by more than a margin
      const warm = rss.slice(Math.floor(rss.length / 5));
      const third = Math.max(1, Math.floor(warm.length / 3));
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const early = mean(warm.slice(0, third));
      const late = mean(warm.slice(-third));
      const mb = (x: number) => `${(x / 1048576).toFixed(0)} MB`;
      console.log(
        `# soak [${dialect}]: ${SECONDS} s, ${WORKERS} connections, ${stats.requests} requests, ${stats.errors5xx} 5xx, ` +
          `${stats.refusals} refusals (all {detail}), ${stats.notModified} 304, ${acked.length} acknowledged notes; ` +
          `${lines} log lines searched for ${secrets.size} secrets; ` +
          `RSS start ${mb(rss[0]!)}, after warm-up ${mb(early)}, end ${mb(late)} (${rss.length} samples)`,
      );
      assert.ok(late < early * 1.25 + 16 * 1048576, `RSS grew from ${mb(early)} to ${mb(late)}`);
    });

    it('slow clients cannot hold the server: a trickled body and a client that never reads are cut', async () => {
      // the large file lands first, through the server with the default timeouts: the slow server
      // below cuts a request body after 2 s, and a loaded machine may take longer than that to
      // take in 24 MB (the upload is not what this test is about)
      const big = Buffer.concat([image, Buffer.alloc(24 * 1024 * 1024, 7)]);
      const { payload, headers } = multipart([{ name: 'file', filename: 'big.png', content: big }]);
      const landed = await fetch(`${server.url}/api/v1/assets/${refs['co-coat']}/versions`, {
        method: 'POST',
        headers: { ...auth(admin), ...headers },
        body: payload,
      });
      assert.equal(landed.status, 201);
      const media = await env.handle.db
        .selectFrom('versions')
        .where('id', '=', ((await landed.json()) as { id: number }).id)
        .select('media_id')
        .executeTakeFirstOrThrow();

      const slow = await startServer(env, {
        PRODGRAPH_RATE_LIMIT: 'off',
        PRODGRAPH_HEADERS_TIMEOUT_MS: '1000',
        PRODGRAPH_REQUEST_TIMEOUT_MS: '2000',
        PRODGRAPH_IDLE_TIMEOUT_MS: '1000',
      });
      const production = async () => {
        const t = Date.now();
        const r = await fetch(`${slow.url}/api/v1/production`, { headers: auth(admin) });
        assert.equal(r.status, 200);
        await r.text();
        return Date.now() - t;
      };
      // the control: how long a normal request takes on this machine right now, nobody stalling
      let control = 0;
      for (let i = 0; i < 3; i++) control = Math.max(control, await production());
      let dribble: NodeJS.Timeout | undefined;
      try {
        // a body trickled a byte every 200 ms, for ever
        const trickle = connect(slow.port, '127.0.0.1');
        const trickleClosed = new Promise<number>((resolve) => {
          const started = Date.now();
          trickle.on('close', () => resolve(Date.now() - started));
          trickle.on('error', () => undefined);
        });
        trickle.write(
          `POST /api/v1/assets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
        );
        dribble = setInterval(() => trickle.writable && trickle.write(' '), 200);
        // headers never finished
        const mute = connect(slow.port, '127.0.0.1');
        const muteClosed = new Promise<void>((resolve) => mute.on('close', () => resolve()));
        mute.on('error', () => undefined);
        mute.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');

        // a client that asks for the large file and never reads it
        const stuck = connect(slow.port, '127.0.0.1');
        stuck.pause();
        let received = 0;
        const stuckClosed = new Promise<void>((resolve) => stuck.on('close', () => resolve()));
        stuck.on('error', () => undefined);
        stuck.write(
          `GET /api/v1/media/${media.media_id}/content HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin}\r\n\r\n`,
        );

        // meanwhile everyone else is served at once: held up, a request would wait for the 1 s
        // timeouts; the bound allows for a loaded machine, measured by the control above
        const bound = Math.max(1000, 3 * control);
        for (let i = 0; i < 5; i++) {
          const ms = await production();
          assert.ok(ms < bound, `a normal request is not held up (${ms} ms; control ${control} ms)`);
        }
        const trickleMs = await trickleClosed;
        assert.ok(trickleMs < 6000, `the trickling client was cut after ${trickleMs} ms`);
        await muteClosed;
        // the reader that never read: once the server has given up on it (its log says so), what
        // it can still read is what sat in the socket buffers then, far short of the file
        const download = `/api/v1/media/${media.media_id}/content`;
        await slow.lineMatching(
          (l) => l.includes(download) && /stream closed prematurely|request aborted/.test(l),
          'the stalled download given up',
        );
        stuck.on('data', (chunk: Buffer) => (received += chunk.length));
        stuck.resume();
        await stuckClosed;
        assert.ok(
          received > 0 && received < big.length / 2,
          `the stalled download was cut (${received} bytes)`,
        );
        const rss = rssOf(slow.child.pid!);
        assert.ok(rss < 400 * 1048576, `the unread file was streamed, not buffered (RSS ${rss})`);
      } finally {
        // a failed assertion must not leave a timer that keeps the test process alive
        clearInterval(dribble);
        slow.child.kill('SIGTERM');
        await slow.exited;
      }
    });
  });
}

function auth(t: string) {
  return { authorization: `Bearer ${t}` };
}
