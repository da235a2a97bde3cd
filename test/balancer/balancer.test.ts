import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { haproxyBinary, pidOwningPort, startBalancer, type Balancer } from '../support/balancer.js';
import { createEnv, type TestEnv } from '../support/env.js';
import { Receiver, until, type Received } from '../support/receiver.js';
import { ALL_SCOPES, importRoundTrip } from '../support/round-trip.js';
import { freePort, startServer, type ServerProcess } from '../support/server-process.js';

/*
 * Three real `prodgraph serve` processes on one PostgreSQL schema behind a real HAProxy running
 * deploy/haproxy.cfg (round robin, health-checked on /healthz). A mixed load goes through the
 * balancer the whole time — reads, vendor reads, notes written with an Idempotency-Key by a
 * client that repeats a request whose connection failed, long-polls following GET /changes,
 * media tickets and their files, every change POSTed to a webhook receiver — while a key and a
 * grant are revoked, each server is stopped (SIGTERM) and started again in turn, and the server
 * delivering webhooks is killed (SIGKILL) in the middle of a delivery.
 *
 * `npm run test:balancer`. PostgreSQL (PRODGRAPH_TEST_PG) and haproxy (Debian's package) are
 * needed; without them it skips, except under CI (CI=true), where it fails.
 */

const PG = process.env.PRODGRAPH_TEST_PG;
const HAPROXY = haproxyBinary();
const missing = !PG
  ? 'PostgreSQL (PRODGRAPH_TEST_PG)'
  : !HAPROXY
    ? 'haproxy (apt-get install haproxy)'
    : null;
const CI = process.env.CI === 'true';

/** Each key's requests a window: low enough to exhaust in seconds, so the load rotates its keys. */
const LIMIT = 300;
const SERVER_ENV = {
  PRODGRAPH_RATE_LIMIT: String(LIMIT),
  PRODGRAPH_RATE_LIMIT_WINDOW_MS: '3600000',
  PRODGRAPH_TRUST_PROXY: '127.0.0.1',
  PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32',
  PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
  PRODGRAPH_WEBHOOK_RETRY_MAX_MS: '400',
  // the server's own drain on SIGTERM (empty: its default), which the harness turns off
  PRODGRAPH_DRAIN_MS: '',
};
/** Connections of the load (each a loop of the steps below) and long-poll followers. */
const LOOPS = 4;
const FOLLOWERS = 2;

interface Failure {
  /** When the client saw it fail. */
  at: number;
  what: string;
  /** The server HAProxy named (X-Served-By), empty when the connection itself failed. */
  server: string;
  detail: string;
}

describe(
  'three servers behind HAProxy on one PostgreSQL',
  { skip: missing && !CI ? `needs ${missing}` : false },
  () => {
    let env: TestEnv;
    let lb: Balancer;
    let rx: Receiver;
    const servers: ServerProcess[] = [];
    const ports: number[] = [];
    let refs: Record<string, number>;
    let admin: string;
    let mediaPath: string;
    let subscription: { id: number; cursor: string };
    let firstTicket: string;
    const started = Date.now();

    // what the load saw
    const failures: Failure[] = [];
    const events: Array<[number, string]> = [];
    const served: Record<string, number> = {};
    const counts = { requests: 0, retried: 0, gaveUp: 0 };
    const acked: string[] = [];
    const followed: string[][] = [];
    let stopping = false;
    let load: Promise<unknown> | undefined;
    /** The server killed, when, when HAProxy took it out, and the delivery it was making. */
    let killed: { name: string; at: number; out: number; delivery: string } | undefined;

    /** A failure of a request in flight on the killed server: between the kill and HAProxy taking it out. */
    const inFlightOnKilled = (f: Failure) =>
      !!killed && f.at >= killed.at && f.at <= killed.out && (f.server === killed.name || f.server === '');
    const auth = (token: string) => ({ authorization: `Bearer ${token}` });
    const nameOf = (i: number) => `s${i + 1}`;

    /**
     * One request as an idempotent client makes it: a failed connection or a 502/503/504 from the
     * balancer is sent again, unchanged (same Idempotency-Key), after a short pause. Every answer
     * outside `ok` is a failure, recorded with the server that gave it.
     */
    const send = async (what: string, url: string, init: RequestInit = {}, ok = [200]) => {
      for (let attempt = 1; ; attempt++) {
        let status = 0;
        let server = '';
        let text = '';
        let headers = new Headers();
        try {
          const r = await fetch(url, init);
          ({ status, headers } = r);
          server = r.headers.get('x-served-by') ?? '';
          text = await r.text();
        } catch (err) {
          status = 0;
          text = String((err as Error).cause ?? err);
        }
        counts.requests++;
        if (server) served[server] = (served[server] ?? 0) + 1;
        if (ok.includes(status)) return { status, headers, text, server };
        failures.push({
          at: Date.now(),
          what,
          server,
          detail: `${status || 'no answer'} ${text.slice(0, 300)}`,
        });
        if (![0, 502, 503, 504].includes(status) || attempt >= 30) {
          counts.gaveUp++;
          return { status, headers, text, server };
        }
        counts.retried++;
        // a pause before trying again, as any retrying client makes: not a wait for an event
        await new Promise((r) => setTimeout(r, 50 * Math.min(attempt, 10)));
      }
    };
    const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

    /** A key of the load, replaced by a fresh one well before it reaches its rate limit. */
    const keyRing = (input: Parameters<TestEnv['mint']>[0]) => {
      let token = '';
      let uses = Infinity;
      return async () => {
        if (++uses > LIMIT / 2) {
          token = await env.mint(input);
          uses = 1;
        }
        return token;
      };
    };

    const loop = async () => {
      const adminKey = keyRing({ production: 'film', scopes: [...ALL_SCOPES, 'admin'] });
      const vendorKey = keyRing({ production: 'film', scopes: ['read'], engagement: 'eng-pix' });
      const B = `${lb.url}/api/v1`;
      const steps = [
        async () => send('production', `${B}/production`, { headers: auth(await adminKey()) }),
        async () => send('assets', `${B}/assets?department=costume`, { headers: auth(await adminKey()) }),
        async () =>
          send('vendor bundle', `${B}/bundles/scene/${refs.sc1}`, { headers: auth(await vendorKey()) }),
        async () => {
          const text = `balancer ${randomUUID()}`;
          const r = await send(
            'note',
            `${B}/assets/${refs['co-coat']}/notes`,
            {
              method: 'POST',
              headers: {
                ...auth(await adminKey()),
                'content-type': 'application/json',
                'idempotency-key': randomUUID(),
              },
              body: JSON.stringify({ text }),
            },
            [201],
          );
          if (r.status === 201) acked.push(text);
        },
        async () => {
          const r = await send('media ticket', `${B}/media-ticket`, { headers: auth(await adminKey()) });
          if (r.status !== 200) return;
          await send('media file', `${lb.url}${mediaPath}?t=${json(r.text).ticket as string}`);
        },
      ];
      for (let n = Math.floor(Math.random() * steps.length); !stopping; n++) await steps[n % steps.length]!();
    };

    /** Follows the feed through the balancer with long-polls; the cursors seen, in order. */
    const follow = async (seen: string[]) => {
      const key = keyRing({ production: 'film', scopes: ['read'] });
      const first = await send('feed head', `${lb.url}/api/v1/changes?after=now`, {
        headers: auth(await key()),
      });
      let cursor = json(first.text).next_cursor as string;
      seen.push(cursor);
      while (!stopping) {
        const r = await send('long-poll', `${lb.url}/api/v1/changes?after=${cursor}&wait=5`, {
          headers: auth(await key()),
        });
        if (r.status !== 200) continue;
        const page = json(r.text) as { changes: Array<{ cursor: string }>; next_cursor: string };
        seen.push(...page.changes.map((c) => c.cursor));
        cursor = page.next_cursor;
      }
    };

    /** The feed read page by page straight from one server, from `after` to its head. */
    const feedFrom = async (after: string) => {
      const token = await env.mint({ production: 'film', scopes: ['read'] });
      const out: string[] = [];
      for (let cursor = after; ;) {
        const r = await fetch(`${servers[0]!.url}/api/v1/changes?after=${cursor}&limit=1000`, {
          headers: auth(token),
        });
        assert.equal(r.status, 200);
        const page = (await r.json()) as {
          changes: Array<{ cursor: string }>;
          next_cursor: string;
          more: boolean;
        };
        out.push(...page.changes.map((c) => c.cursor));
        cursor = page.next_cursor;
        if (!page.more) return out;
      }
    };

    const states = () => lb.states();
    const inRotation = (i: number) =>
      until(`${nameOf(i)} in rotation`, async () => (await states())[nameOf(i)] === 'UP', 30_000);
    /** Waits until server i has answered `n` more requests of the load through the balancer. */
    const servesLoad = async (i: number, n = 5) => {
      const from = served[nameOf(i)] ?? 0;
      await until(`${nameOf(i)} serving the load`, () => (served[nameOf(i)] ?? 0) >= from + n, 30_000);
    };
    const startAt = async (i: number) => {
      servers[i] = await startServer(env, SERVER_ENV, { port: ports[i] });
    };

    before(async () => {
      if (missing)
        throw new Error(`the balancer test needs ${missing} (CI=true: failing instead of skipping)`);
      env = await createEnv('postgres');
      refs = await importRoundTrip(env, 'film');
      admin = await env.mint({ production: 'film', scopes: [...ALL_SCOPES, 'admin'] });
      const coat = await env.handle.db
        .selectFrom('versions')
        .innerJoin('media', 'media.id', 'versions.media_id')
        .where('versions.node_id', '=', refs['co-coat']!)
        .select('media.storage_key')
        .executeTakeFirstOrThrow();
      mediaPath = `/media/${coat.storage_key.slice(coat.storage_key.indexOf('/') + 1)}`;
      for (let i = 0; i < 3; i++) ports.push(await freePort());
      // the env migrated the schema: the three find it done
      await Promise.all([0, 1, 2].map(startAt));
      lb = await startBalancer(HAPROXY!, ports, env.dir);
      for (let i = 0; i < 3; i++) await inRotation(i);
      rx = await new Receiver().start();
      const sub = await send(
        'subscribe',
        `${lb.url}/api/v1/admin/webhooks`,
        {
          method: 'POST',
          headers: { ...auth(admin), 'content-type': 'application/json' },
          body: JSON.stringify({ url: rx.url }),
        },
        [201],
      );
      subscription = json(sub.text) as { id: number; cursor: string };
      load = Promise.all([
        ...Array.from({ length: LOOPS }, loop),
        ...Array.from({ length: FOLLOWERS }, () => {
          const seen: string[] = [];
          followed.push(seen);
          return follow(seen);
        }),
      ]);
      for (let i = 0; i < 3; i++) await servesLoad(i);
    });

    after(async () => {
      stopping = true;
      await load?.catch(() => undefined);
      await lb?.stop();
      for (const s of servers) {
        if (s.child.exitCode === null && s.child.signalCode === null) {
          s.child.kill('SIGTERM');
          await s.exited;
        }
      }
      await rx?.close();
      await env?.close();
      console.log(
        `# balancer: ${((Date.now() - started) / 1000).toFixed(1)} s, ${counts.requests} requests ` +
          `(${Object.entries(served)
            .map(([s, n]) => `${s} ${n}`)
            .join(', ')}), ${failures.length} failed answers, ${counts.retried} retried, ` +
          `${acked.length} notes, ${rx?.got.length ?? 0} webhook deliveries`,
      );
      const kinds = new Map<string, number>();
      for (const f of failures) {
        const k =
          `${inFlightOnKilled(f) ? 'in flight on the killed server' : 'FAILED'}: ` +
          `${f.what} from ${f.server || 'no server'}: ${f.detail.slice(0, 80)}`;
        kinds.set(k, (kinds.get(k) ?? 0) + 1);
      }
      for (const [k, n] of kinds) console.log(`#   ${n} × ${k}`);
      // when each failure that is not the killed server's came, against what the test was doing
      for (const f of failures.filter((f) => !inFlightOnKilled(f) && f.what !== 'media file')) {
        const [at, what] = events.filter(([t]) => t <= f.at).pop() ?? [started, 'start'];
        console.log(`#   ${f.what} failed ${f.at - at} ms after ${what}: ${f.detail.slice(0, 80)}`);
      }
    });

    const eachServer = (path: string, token?: string) =>
      Promise.all(
        servers.map(async (s) => {
          const r = await fetch(`${s.url}${path}`, token ? { headers: auth(token) } : {});
          await r.arrayBuffer();
          return r.status;
        }),
      );

    it('a key revoked through the balancer is refused by every server at once', async () => {
      const minted = json(
        (
          await send(
            'mint',
            `${lb.url}/api/v1/admin/keys`,
            {
              method: 'POST',
              headers: { ...auth(admin), 'content-type': 'application/json' },
              body: JSON.stringify({ label: 'revoked under load' }),
            },
            [201],
          )
        ).text,
      ) as { id: number; token: string };
      assert.deepEqual(await eachServer('/api/v1/production', minted.token), [200, 200, 200]);
      const revoked = await send('revoke key', `${lb.url}/api/v1/admin/keys/${minted.id}/revoke`, {
        method: 'POST',
        headers: auth(admin),
      });
      assert.equal(revoked.status, 200);
      assert.deepEqual(await eachServer('/api/v1/production', minted.token), [401, 401, 401]);
      for (let i = 0; i < 3; i++) {
        const r = await fetch(`${lb.url}/api/v1/production`, { headers: auth(minted.token) });
        assert.equal(r.status, 401);
        await r.arrayBuffer();
      }
    });

    it('a grant revoked through the balancer is refused by every server at once', async () => {
      const vendor = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-none' });
      const path = `/api/v1/bundles/scene/${refs.sc1}`;
      assert.deepEqual(await eachServer(path, vendor), [404, 404, 404]);
      const given = await send(
        'grant',
        `${lb.url}/api/v1/admin/grants`,
        {
          method: 'POST',
          headers: { ...auth(admin), 'content-type': 'application/json' },
          body: JSON.stringify({ engagement_id: refs['eng-none'], kind: 'scene', node_id: refs.sc1 }),
        },
        [201],
      );
      const grant = json(given.text) as { id: number };
      assert.deepEqual(await eachServer(path, vendor), [200, 200, 200]);
      const revoked = await send('revoke grant', `${lb.url}/api/v1/admin/grants/${grant.id}/revoke`, {
        method: 'POST',
        headers: auth(admin),
      });
      assert.equal(revoked.status, 200);
      assert.deepEqual(await eachServer(path, vendor), [404, 404, 404]);
    });

    it('a media ticket minted through the balancer opens the file on every server', async () => {
      const r = await send('media ticket', `${lb.url}/api/v1/media-ticket`, { headers: auth(admin) });
      firstTicket = json(r.text).ticket as string;
      assert.deepEqual(await eachServer(`${mediaPath}?t=${firstTicket}`), [200, 200, 200]);
    });

    it('each server stopped (SIGTERM) and started again in turn, the load carrying on', async () => {
      for (let i = 0; i < 3; i++) {
        const s = servers[i]!;
        const t0 = Date.now();
        events.push([t0, `${nameOf(i)} SIGTERM`]);
        s.child.kill('SIGTERM');
        assert.equal(await s.exited, 0, `${nameOf(i)} stopped cleanly`);
        const t1 = Date.now();
        await startAt(i);
        const t2 = Date.now();
        await inRotation(i);
        const t3 = Date.now();
        events.push([t1, `${nameOf(i)} exited`], [t2, `${nameOf(i)} listening`], [t3, `${nameOf(i)} UP`]);
        await servesLoad(i);
        console.log(
          `# ${nameOf(i)}: stopped in ${t1 - t0} ms, started in ${t2 - t1} ms, ` +
            `back in rotation ${t3 - t2} ms later, serving ${Date.now() - t3} ms later`,
        );
      }
    });

    it('the server delivering webhooks killed (SIGKILL) mid-delivery: another one takes over', async () => {
      // the next delivery is held unanswered; the process that sent it is the one killed
      let release!: (status: number) => void;
      const held = new Promise<number>((resolve) => (release = resolve));
      const caught = new Promise<Received & { pid: number | null }>((resolve) => {
        rx.answer = (r) => {
          rx.answer = () => 200;
          resolve({
            ...r,
            pid: pidOwningPort(
              r.remotePort,
              servers.map((s) => s.child.pid!),
            ),
          });
          return held;
        };
      });
      const delivery = await caught;
      const i = servers.findIndex((s) => s.child.pid === delivery.pid);
      assert.ok(i >= 0, 'the delivering process is one of the three');
      killed = {
        name: nameOf(i),
        at: Date.now(),
        out: Infinity,
        delivery: delivery.headers['prodgraph-delivery'] as string,
      };
      events.push([killed.at, `${nameOf(i)} SIGKILL`]);
      servers[i]!.child.kill('SIGKILL');
      // HAProxy's checks take it out of rotation: from then on no request can be in flight on it
      const out = until(`${nameOf(i)} out of rotation`, async () =>
        (await states())[nameOf(i)]!.startsWith('DOWN'),
      ).then(() => (killed!.out = Date.now()));
      await servers[i]!.exited;
      release(200);
      const redelivered = Date.now();
      try {
        await until(
          'the held delivery made again by another server within 5 s',
          () =>
            rx.got.some((r) => r.at >= redelivered && r.headers['prodgraph-delivery'] === killed!.delivery),
          5_000,
        );
        console.log(`# webhook failover: ${Date.now() - killed.at} ms after the SIGKILL`);
      } finally {
        // started again whatever happened: the tests after this one ask every server
        await out;
        console.log(`# ${nameOf(i)} out of rotation ${killed.out - killed.at} ms after the SIGKILL`);
        await startAt(i);
        await inRotation(i);
        await servesLoad(i);
      }
    });

    it('a ticket minted before the restarts still opens the file on every server', async () => {
      assert.deepEqual(await eachServer(`${mediaPath}?t=${firstTicket}`), [200, 200, 200]);
    });

    it('the load: no failed request but the killed server’s in-flight ones, each retried; no write lost or doubled', async () => {
      stopping = true;
      await load;
      const unexplained = failures.filter((f) => !inFlightOnKilled(f));
      assert.deepEqual(
        unexplained.slice(0, 10),
        [],
        `${unexplained.length} failed answers not the killed server's`,
      );
      assert.equal(counts.gaveUp, 0, 'every retried request succeeded in the end');
      const rows = await env.handle.db
        .selectFrom('version_notes')
        .where('text', 'like', 'balancer %')
        .select('text')
        .execute();
      const stored = new Map<string, number>();
      for (const r of rows) stored.set(r.text, (stored.get(r.text) ?? 0) + 1);
      assert.deepEqual(
        acked.filter((t) => !stored.has(t)),
        [],
        'no acknowledged note is lost',
      );
      assert.deepEqual(
        [...stored].filter(([, n]) => n > 1),
        [],
        'no note is written twice',
      );
      assert.equal(rows.length, acked.length, 'every note written was acknowledged');
      assert.ok(acked.length > 0);
    });

    it('the long-polls saw every change, in order, through every restart', async () => {
      for (const seen of followed) {
        const [from, ...got] = seen;
        const feed = await feedFrom(from!);
        assert.deepEqual(got, feed.slice(0, got.length), 'a gap-free prefix of the feed');
        assert.ok(got.length > 0);
      }
    });

    it('every change delivered to the webhook once; a redelivery carries the same Prodgraph-Delivery', async () => {
      const feed = await feedFrom(subscription.cursor);
      const byCursor = new Map<string, Set<string>>();
      await until(
        'every change delivered',
        () => new Set(rx.got.map((r) => r.json.change.cursor)).size >= feed.length,
        30_000,
      );
      for (const r of rx.got) {
        const ids = byCursor.get(r.json.change.cursor) ?? new Set();
        ids.add(r.headers['prodgraph-delivery'] as string);
        byCursor.set(r.json.change.cursor, ids);
      }
      assert.deepEqual([...byCursor.keys()].sort(), [...feed].sort(), 'the changes of the feed, each');
      const twoIds = [...byCursor].filter(([, ids]) => ids.size > 1);
      assert.deepEqual(twoIds, [], 'a change delivered again keeps its delivery id');
      const ids = rx.got.map((r) => r.headers['prodgraph-delivery']);
      console.log(`# webhooks: ${feed.length} changes, ${ids.length - new Set(ids).size} redeliveries`);
    });

    it('a key’s rate limit is counted once across the three servers', async () => {
      const token = await env.mint({ production: 'film', scopes: ['read'] });
      let ok = 0;
      // until two full turns of the round robin refuse it
      for (let refusedInARow = 0; refusedInARow < 6;) {
        const r = await send('limited', `${lb.url}/api/v1/production`, { headers: auth(token) }, [200, 429]);
        if (r.status === 200) {
          ok++;
          refusedInARow = 0;
        } else refusedInARow++;
        assert.ok(ok <= LIMIT, `more than ${LIMIT} answered`);
      }
      // a server holds at most 1/64 of what was left of the window unused (README, rate limits)
      const slack = 2 * Math.ceil(LIMIT / 64);
      console.log(`# rate limit ${LIMIT}: ${ok} answered through the balancer, then refused by every server`);
      assert.ok(ok >= LIMIT - slack, `${ok} answered before the limit, expected ${LIMIT - slack}–${LIMIT}`);
      assert.deepEqual(await eachServer('/api/v1/production', token), [429, 429, 429]);
    });
  },
);
