import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createEnv, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call } from './support/http.js';
import { Receiver, until } from './support/receiver.js';
import { dbArgOf, startServer, type ServerProcess } from './support/server-process.js';

/*
 * PostgreSQL going away under load, as a restart does it: every connection the server holds is
 * ended (57P01, what `pg_ctlcluster … restart` sends) and new ones are refused for a while. The
 * server connects as a role of this test's own and under an application_name of its own, so the
 * test cuts only its connections (`pg_terminate_backend`) and refuses only its logins (the role's
 * CONNECTION LIMIT 0): other test files sharing the PostgreSQL are undisturbed, and PostgreSQL
 * itself is never restarted.
 */

const CONNECT_TIMEOUT_MS = 1000;
/**
 * Nothing but a long-poll may take longer than this, outage or not: the connect timeout and a
 * margin, the margin widened on a loaded machine (the suite runs files in parallel) to three
 * times the slowest answer before the outage, measured in the same run.
 */
const answerBound = (control: number) => CONNECT_TIMEOUT_MS + Math.max(9000, 3 * control);
const OUTAGE_MS = 2500;

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.PRODGRAPH_TEST_PG });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers of several shapes
type Body = any;

interface Tally {
  statuses: Map<number, number>;
  slowest: number;
  refusals: Array<{ status: number; retryAfter: string | null; code: unknown }>;
}

const tally = (): Tally => ({ statuses: new Map(), slowest: 0, refusals: [] });

/** One request to the live server, timed and tallied; a 503 is checked for its body and Retry-After. */
async function send(
  t: Tally,
  url: string,
  init: RequestInit & { longPoll?: boolean } = {},
): Promise<{ status: number; body: Body }> {
  const started = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  const took = performance.now() - started;
  if (!init.longPoll) t.slowest = Math.max(t.slowest, took);
  t.statuses.set(res.status, (t.statuses.get(res.status) ?? 0) + 1);
  const body = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  if (res.status >= 500)
    t.refusals.push({ status: res.status, retryAfter: res.headers.get('retry-after'), code: body?.code });
  return { status: res.status, body };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgreSQL goes away under load [postgres]', { skip: !process.env.PRODGRAPH_TEST_PG }, () => {
  let env: TestEnv;
  let server: ServerProcess;
  let receiver: Receiver;
  let writer: string;
  const suffix = randomBytes(5).toString('hex');
  const role = `pgo_${suffix}`;
  const appName = `prodgraph-outage-${suffix}`;

  before(async () => {
    env = await createEnv('postgres', { PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.0/8' });
    await new Factory(env.handle.db).production({ code: 'outage' });
    writer = await env.mint({ production: 'outage', label: 'pipeline' });
    const adminKey = await env.mint({ production: 'outage', scopes: ['admin'] });
    receiver = await new Receiver().start();
    const hook = await call(env.app, 'POST', '/api/v1/admin/webhooks', {
      token: adminKey,
      body: { url: receiver.url, kinds: ['asset'] },
    });
    assert.equal(hook.status, 201, hook.text);
    await admin(async (c) => {
      await c.query(`create role ${role} login`);
      await c.query(`grant usage, create on schema ${env.schema} to ${role}`);
      await c.query(`grant all on all tables in schema ${env.schema} to ${role}`);
      await c.query(`grant all on all sequences in schema ${env.schema} to ${role}`);
    });
    const url = new URL(dbArgOf(env));
    url.username = role;
    url.searchParams.set('application_name', appName);
    server = await startServer(
      env,
      {
        PRODGRAPH_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        PRODGRAPH_RATE_LIMIT: 'off',
        PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.0/8',
        PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
        PRODGRAPH_WEBHOOK_RETRY_MAX_MS: '500',
      },
      { db: url.toString() },
    );
  });

  after(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await receiver?.close();
    await admin(async (c) => {
      await c.query(`alter role ${role} connection limit -1`).catch(() => undefined);
      await c.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]);
      await c.query(`drop owned by ${role}`).catch(() => undefined);
      await c.query(`drop role if exists ${role}`);
    }).catch(() => undefined);
    await env?.close();
  });

  it('refuses with 503 and Retry-After while it is away, reconnects by itself, loses and doubles no write; feed and webhooks resume', async () => {
    const reads = tally();
    const writes = tally();
    const feed = tally();
    const health: Array<{ at: number; status: number; retryAfter: string | null; code: unknown }> = [];
    const acked = new Map<string, number>(); // label → node id
    const auth = { authorization: `Bearer ${writer}` };
    let running = true;

    const writeLoop = async (w: number) => {
      for (let n = 0; running; n++) {
        const label = `outage w${w} n${n}`;
        // retried with the same Idempotency-Key until acknowledged: never applied twice
        for (;;) {
          const r = await send(writes, `${server.url}/api/v1/assets`, {
            method: 'POST',
            headers: {
              ...auth,
              'content-type': 'application/json',
              'idempotency-key': `${suffix}-${w}-${n}`,
            },
            body: JSON.stringify({ label }),
          });
          if (r.status === 201) {
            acked.set(label, r.body.node_id);
            break;
          }
          assert.equal(r.status, 503, JSON.stringify(r.body));
          await pause(50);
        }
      }
    };
    const readLoop = async () => {
      while (running) {
        await send(reads, `${server.url}/api/v1/assets?limit=5`, { headers: auth });
        await pause(10);
      }
    };
    const seen: number[] = [];
    let feedCursor = 'now';
    const feedLoop = async () => {
      while (running) {
        const r = await send(feed, `${server.url}/api/v1/changes?after=${feedCursor}&wait=2`, {
          headers: auth,
          longPoll: true,
        });
        if (r.status !== 200) {
          await pause(100);
          continue;
        }
        for (const c of r.body.changes) if (c.kind === 'asset' && c.op === 'created') seen.push(c.id);
        feedCursor = r.body.next_cursor;
      }
    };
    const healthLoop = async () => {
      while (running) {
        const t = tally();
        const r = await send(t, `${server.url}/healthz`);
        const refusal = t.refusals[0];
        health.push({
          at: Date.now(),
          status: r.status,
          retryAfter: refusal?.retryAfter ?? null,
          code: refusal?.code,
        });
        await pause(50);
      }
    };
    // the feed starts from `now` before any write
    const first = await send(feed, `${server.url}/api/v1/changes?after=now`, { headers: auth });
    feedCursor = first.body.next_cursor;

    const loops = [writeLoop(0), writeLoop(1), readLoop(), readLoop(), feedLoop(), healthLoop()];
    await pause(1500);

    // the outage: logins refused, every connection the server holds ended
    const bound = answerBound(Math.max(reads.slowest, writes.slowest));
    const down = Date.now();
    await admin(async (c) => {
      await c.query(`alter role ${role} connection limit 0`);
      await c.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [
        appName,
      ]);
    });
    const ackedBefore = acked.size;
    await pause(OUTAGE_MS);
    const ackedDuring = acked.size - ackedBefore;
    await admin((c) => c.query(`alter role ${role} connection limit -1`));
    const up = Date.now();
    await until(
      'a write acknowledged after the outage',
      () => acked.size > ackedBefore + ackedDuring,
      15_000,
    );
    const firstWriteAfter = Date.now();
    await until(
      '/healthz ok after the outage',
      () => health.some((h) => h.at > up && h.status === 200),
      15_000,
    );
    await pause(1000);
    running = false;
    await Promise.all(loops);

    // the process lived through it, and said why requests were refused
    assert.equal(server.child.exitCode, null, server.output.join('\n'));
    assert.ok(!server.output.some((l) => /Unhandled|uncaught/i.test(l)), server.output.join('\n'));

    // during the outage: 503 {detail, code} with Retry-After, nothing else, and nothing held
    const refused = [...reads.refusals, ...writes.refusals, ...feed.refusals];
    assert.ok(refused.length > 0, 'the outage refused nothing: it did not happen');
    for (const r of refused) {
      assert.equal(r.status, 503);
      assert.equal(r.code, 'unavailable');
      assert.ok(Number(r.retryAfter) >= 1, `Retry-After: ${r.retryAfter}`);
    }
    for (const t of [reads, writes, feed]) {
      assert.deepEqual(
        [...t.statuses.keys()].filter((s) => s !== 200 && s !== 201 && s !== 503),
        [],
      );
    }
    assert.ok(
      reads.slowest < bound && writes.slowest < bound,
      `slowest ${reads.slowest}/${writes.slowest} ms (bound ${bound} ms)`,
    );
    assert.ok(
      health.some((h) => h.at > down && h.at < up && h.status === 503),
      '/healthz said ok during the outage',
    );
    // a load balancer's probe is told when to look again, like every other refused request
    for (const h of health.filter((x) => x.status !== 200)) {
      assert.equal(h.status, 503);
      assert.equal(h.code, 'unavailable');
      assert.ok(Number(h.retryAfter) >= 1, `/healthz Retry-After: ${h.retryAfter}`);
    }

    // every acknowledged write is there exactly once, and nothing unacknowledged is
    const rows = await env.handle.db
      .selectFrom('nodes')
      .where('label', 'like', 'outage w%')
      .select(['id', 'label'])
      .execute();
    assert.equal(rows.length, acked.size, 'rows beside the acknowledged writes');
    for (const r of rows) assert.equal(acked.get(r.label), r.id, r.label);

    // the feed resumed from its cursor: every acknowledged asset, in commit order, none twice
    const ids = [...acked.values()];
    await until('the feed to catch up', async () => {
      const r = await send(feed, `${server.url}/api/v1/changes?after=${feedCursor}`, { headers: auth });
      for (const c of r.body.changes) if (c.kind === 'asset' && c.op === 'created') seen.push(c.id);
      feedCursor = r.body.next_cursor;
      return r.body.changes.length === 0;
    });
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      [...ids].sort((a, b) => a - b),
    );
    // and the webhook worker resumed from its stored cursor: every one delivered (at least once)
    await until(
      'every asset delivered to the webhook',
      () => {
        const got = new Set(receiver.got.map((g) => g.json.change.id));
        return ids.every((id) => got.has(id));
      },
      20_000,
    );

    const recovery = firstWriteAfter - up;
    console.log(
      `outage figures: ${refused.length} requests refused (503) in a ${OUTAGE_MS} ms outage; ` +
        `first write acknowledged ${recovery} ms after PostgreSQL took logins again; ` +
        `${acked.size} writes acknowledged, 0 lost, 0 doubled; slowest answer ${Math.round(Math.max(reads.slowest, writes.slowest))} ms; ` +
        `webhook deliveries ${receiver.got.length} for ${ids.length} assets; ` +
        `/healthz 503 (with Retry-After) ${health.filter((h) => h.status === 503).length} times`,
    );
  });
});
