import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { performance } from 'node:perf_hooks';
import { buildApp, type App } from '../src/app.js';
import { verifySignature } from '../src/modules/webhooks/signature.js';
import { createEnv, DIALECTS, openSecondHandle, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { Receiver, until } from './support/receiver.js';
import { call, get } from './support/http.js';
import { TestClock } from './support/test-clock.js';

/**
 * A receiver's answer is awaited 2 s, on the workers' clock (a TestClock that also runs in real
 * time): the retry test moves it past the timeout instead of waiting it out, and a loaded
 * machine (the suite runs files in parallel) does not turn a prompt answer into a timeout.
 */
const TIMEOUT_MS = 2000;
const TEST_CONFIG = {
  // the receivers listen on loopback, which webhooks reach only when allowed
  PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32',
  PRODGRAPH_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
  PRODGRAPH_WEBHOOK_RETRY_MAX_MS: '400',
};

for (const dialect of DIALECTS) {
  describe(`webhooks [${dialect}]`, () => {
    let env: TestEnv;
    let admin: string;
    let writer: string;
    let worker: App;
    let coat: number;
    const receivers: Receiver[] = [];
    // real time, but the retry test moves it on past an attempt's timeout
    const clock = new TestClock(true);

    const startWorker = async (database = env.handle) => {
      const app = await buildApp({
        config: env.config,
        database,
        store: env.store,
        logger: false,
        webhooks: true,
        clock,
      });
      await app.ready();
      return app;
    };
    const receiver = async () => {
      const r = await new Receiver().start();
      receivers.push(r);
      return r;
    };
    const subscribe = async (body: Record<string, unknown>) => {
      const r = await call(env.app, 'POST', '/api/v1/admin/webhooks', { token: admin, body });
      assert.equal(r.status, 201, r.text);
      return r.body as { id: number; secret: string; cursor: string };
    };
    const addAsset = async (label: string) => {
      const r = await call(env.app, 'POST', '/api/v1/assets', { token: writer, body: { label } });
      assert.equal(r.status, 201, r.text);
      return r.body.node_id as number;
    };
    const remove = (id: number) =>
      call(env.app, 'POST', `/api/v1/admin/webhooks/${id}/remove`, { token: admin });
    /** The subscription's stored position is the feed's head: every change so far passed (or held back). */
    const caughtUp = async (id: number) => {
      const head = (await get(env.app, '/api/v1/changes?after=now', writer)).body.next_cursor;
      await until(`webhook ${id} past every change`, async () => {
        const listed = (await get(env.app, '/api/v1/admin/webhooks', admin)).body as Array<{
          id: number;
          cursor: string;
        }>;
        return listed.find((w) => w.id === id)?.cursor === head;
      });
    };

    before(async () => {
      env = await createEnv(dialect, TEST_CONFIG);
      // an asset with a version to hold notes, a vendor engagement, and another production
      const make = new Factory(env.handle.db);
      const hooks = (await make.production({ code: 'hooks' })).id;
      await make.production({ code: 'other' });
      coat = (await make.asset(hooks, { ref: 'co-coat', kind: 'costume', label: 'Mara coat' })).id;
      await make.version(hooks, coat);
      const pix = await make.organisation(hooks, { name: 'Pixelworks Ltd' });
      await make.engagement(hooks, pix.id, { ref: 'eng-pix' });
      admin = await env.mint({ production: 'hooks', scopes: ['admin'] });
      writer = await env.mint({ production: 'hooks', label: 'pipeline' });
      worker = await startWorker();
    });
    after(async () => {
      await worker.close();
      for (const r of receivers) await r.close();
      await env.close();
    });

    it('the admin API refuses what it must (401, 403, 404, 422) and writes nothing', async () => {
      const A = '/api/v1/admin/webhooks';
      assert.equal((await get(env.app, A)).status, 401);
      assert.equal((await get(env.app, A, writer)).body.code, 'scope_missing');
      const vendor = await env.mint({ production: 'hooks', engagement: 'eng-pix', scopes: ['read'] });
      assert.equal((await get(env.app, A, vendor)).body.code, 'engagement_door');
      const otherAdmin = await env.mint({ production: 'other', scopes: ['admin'] });
      const theirs = await call(env.app, 'POST', A, {
        token: otherAdmin,
        body: { url: 'http://127.0.0.1:9/x' },
      });
      assert.equal(theirs.status, 201);
      for (const path of [`${A}/${theirs.body.id}/deliveries`, `${A}/999999/deliveries`]) {
        assert.equal((await get(env.app, path, admin)).status, 404);
      }
      for (const verb of ['pause', 'resume', 'remove']) {
        const r = await call(env.app, 'POST', `${A}/${theirs.body.id}/${verb}`, { token: admin });
        assert.equal(r.status, 404, verb);
        assert.equal(r.body.code, 'not_found');
      }
      for (const body of [
        { url: 'not a url' },
        { url: 'ftp://example.test/x' },
        { url: 'https://user:pw@example.test/x' },
        { url: 'https://example.test/x', kinds: ['assets'] },
        { url: 'https://example.test/x', kinds: [] },
        { url: 'https://example.test/x', after: 'c1.nope' },
        { url: 'https://example.test/x', secret: 'mine' },
        {},
      ]) {
        const r = await call(env.app, 'POST', A, { token: admin, body });
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_field');
      }
      assert.equal((await get(env.app, `${A}/0/deliveries`, admin)).status, 422);
      assert.equal((await get(env.app, A, admin)).body.length, 0, 'nothing was subscribed');
    });

    it('delivers each change signed, in commit order, as the feed shows it; lists never show the secret', async () => {
      const rx = await receiver();
      const sub = await subscribe({ url: rx.url });
      assert.match(sub.secret, /^whsec_/);
      const listed = await get(env.app, '/api/v1/admin/webhooks', admin);
      assert.equal(listed.body.length, 1);
      assert.equal(listed.body[0].secret, undefined);
      assert.ok(!listed.text.includes(sub.secret));
      const ids = [await addAsset('One'), await addAsset('Two'), await addAsset('Three')];
      await until('three deliveries logged', async () => {
        const log = await get(env.app, `/api/v1/admin/webhooks/${sub.id}/deliveries`, admin);
        return log.body.length === 3;
      });
      assert.deepEqual(
        rx.lines(),
        ids.map((id) => `asset:${id}`),
      );
      const feed = await get(env.app, `/api/v1/changes?after=${sub.cursor}`, writer);
      assert.deepEqual(
        rx.got.map((r) => r.json.change),
        feed.body.changes,
      );
      for (const r of rx.got) {
        assert.ok(verifySignature(sub.secret, r.headers['prodgraph-signature'] as string, r.body));
        assert.ok(!verifySignature('whsec_wrong', r.headers['prodgraph-signature'] as string, r.body));
        assert.ok(!verifySignature(sub.secret, r.headers['prodgraph-signature'] as string, r.body + ' '));
        assert.equal(r.json.production, 'hooks');
        assert.equal(r.json.webhook_id, sub.id);
        assert.equal(r.headers['content-type'], 'application/json');
      }
      const log = await get(env.app, `/api/v1/admin/webhooks/${sub.id}/deliveries`, admin);
      assert.equal(log.status, 200);
      assert.deepEqual(
        log.body.map((d: { delivered: boolean; status_code: number; attempt: number }) => [
          d.delivered,
          d.status_code,
          d.attempt,
        ]),
        [
          [true, 200, 1],
          [true, 200, 1],
          [true, 200, 1],
        ],
      );
      assert.equal(log.body[0].change.id, ids[2]);
      await remove(sub.id);
    });

    it('retries a 500 and a timeout with backoff, keeping the order and logging every attempt', async () => {
      const rx = await receiver();
      let calls = 0;
      let answerLate = () => undefined as void;
      const late = new Promise<void>((r) => (answerLate = r));
      rx.answer = async () => {
        calls++;
        if (calls === 1) return 500;
        if (calls === 2) {
          await late; // past the timeout
          return 200;
        }
        return 200;
      };
      const sub = await subscribe({ url: rx.url });
      const first = await addAsset('Flaky one');
      const second = await addAsset('Flaky two');
      // the second attempt is held by the receiver, its timeout armed: move the clock past it
      await until(
        'the retry held, its timeout running',
        () => rx.got.length === 2 && clock.armed(TIMEOUT_MS) > 0,
      );
      clock.advance(TIMEOUT_MS);
      answerLate();
      await until('both delivered', async () => {
        const log = await get(env.app, `/api/v1/admin/webhooks/${sub.id}/deliveries`, admin);
        return log.body.filter((d: { delivered: boolean }) => d.delivered).length === 2;
      });
      // the first change until it succeeded, then the second: never the second before the first
      const order = rx.got.map((r) => r.json.change.id);
      assert.deepEqual(order, [first, first, first, second]);
      const log = (await get(env.app, `/api/v1/admin/webhooks/${sub.id}/deliveries`, admin)).body.reverse();
      assert.deepEqual(
        log.map(
          (d: {
            change: { id: number };
            attempt: number;
            delivered: boolean;
            status_code: number | null;
          }) => [d.change.id, d.attempt, d.delivered, d.status_code],
        ),
        [
          [first, 1, false, 500],
          [first, 2, false, null],
          [first, 3, true, 200],
          [second, 1, true, 200],
        ],
      );
      assert.match(log[0].error, /500/);
      assert.match(log[1].error, new RegExp(`no answer within ${TIMEOUT_MS} ms`));
      // backoff: the retry came after the base delay
      assert.ok(rx.got[1]!.at - rx.got[0]!.at >= 45);
      await remove(sub.id);
    });

    it("schedules a retry on the database's clock: a server whose clock runs an hour ahead waits the backoff, no longer", async () => {
      const rx = await receiver();
      rx.answer = async () => 500;
      const sub = await subscribe({ url: rx.url });
      const realNow = Date.now();
      // Date frozen an hour ahead for this process (its timers run as usual)
      mock.timers.enable({ apis: ['Date'], now: realNow + 3600_000 });
      try {
        await addAsset('Retried by the database clock');
        let next: string | null = null;
        const deadline = performance.now() + 20_000;
        while (next === null && performance.now() < deadline) {
          const listed = await get(env.app, '/api/v1/admin/webhooks', admin);
          next = listed.body.find((w: { id: number }) => w.id === sub.id)?.next_attempt_at ?? null;
          if (next === null) await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(next, 'the failed delivery scheduled a retry');
        assert.ok(
          Date.parse(next) < realNow + 600_000,
          `the retry is due by the database's clock (${next}), not an hour ahead`,
        );
      } finally {
        mock.timers.reset();
      }
      await remove(sub.id);
    });

    it('a slow or dead receiver does not delay another subscription, nor the API', async () => {
      const slow = await receiver();
      slow.answer = () => new Promise((r) => setTimeout(() => r(200), 5000));
      const fast = await receiver();
      const a = await subscribe({ url: slow.url });
      const dead = await subscribe({ url: 'http://127.0.0.1:9/nobody' });
      const b = await subscribe({ url: fast.url });
      const t0 = Date.now();
      const id = await addAsset('Quick');
      assert.ok(Date.now() - t0 < 1000, 'the write does not wait for receivers');
      await until('the fast receiver', () => fast.got.length === 1, TIMEOUT_MS);
      assert.equal(fast.got[0]!.json.change.id, id);
      assert.ok(fast.got[0]!.at - t0 < 1000, `fast got it after ${fast.got[0]!.at - t0} ms`);
      for (const s of [a, dead, b]) await remove(s.id);
    });

    it('filters by kind, and moves over the changes it leaves out', async () => {
      const rx = await receiver();
      const sub = await subscribe({ url: rx.url, kinds: ['note'] });
      await addAsset('Unheard');
      const note = await call(env.app, 'POST', `/api/v1/assets/${coat}/notes`, {
        token: writer,
        body: { text: 'Heard' },
      });
      assert.equal(note.status, 201);
      await until('the note', () => rx.got.length === 1);
      assert.equal(rx.got[0]!.json.change.kind, 'note');
      assert.equal(rx.got[0]!.json.change.id, note.body.id);
      // its position past the asset left out and the note: nothing more is coming
      await caughtUp(sub.id);
      assert.equal(rx.got.length, 1);
      await remove(sub.id);
    });

    it('pause keeps changes for later, resume delivers them, remove stops', async () => {
      const rx = await receiver();
      // an active subscription beside it: once it has a change, the paused one would have had it too
      const control = await receiver();
      const beside = await subscribe({ url: control.url });
      const sub = await subscribe({ url: rx.url });
      const paused = await call(env.app, 'POST', `/api/v1/admin/webhooks/${sub.id}/pause`, { token: admin });
      assert.equal(paused.status, 200);
      assert.equal(paused.body.active, false);
      const id = await addAsset('While paused');
      const heard = (id: number) => control.got.some((r) => r.json.change.id === id);
      await until('the change delivered beside it', () => heard(id));
      assert.equal(rx.got.length, 0);
      const resumed = await call(env.app, 'POST', `/api/v1/admin/webhooks/${sub.id}/resume`, {
        token: admin,
      });
      assert.equal(resumed.body.active, true);
      await until('the held change', () => rx.got.length === 1);
      assert.equal(rx.got[0]!.json.change.id, id);
      const gone = await remove(sub.id);
      assert.equal(gone.status, 200);
      const afterRemoval = await addAsset('After removal');
      await until('the next change delivered beside it', () => heard(afterRemoval));
      assert.equal(rx.got.length, 1);
      await remove(beside.id);
      assert.equal((await get(env.app, `/api/v1/admin/webhooks/${sub.id}/deliveries`, admin)).status, 404);
      const activity = (await get(env.app, '/api/v1/activity?limit=5', writer)).body as Array<{
        verb: string;
        summary: string;
      }>;
      assert.ok(
        activity.some((a) => a.verb === 'removed' && a.summary === `webhook to ${new URL(rx.url).origin}`),
      );
    });

    it('loses nothing across a restart: delivery resumes from the stored cursor', async () => {
      const rx = await receiver();
      const sub = await subscribe({ url: rx.url });
      const before = [await addAsset('R1'), await addAsset('R2')];
      await until('the first two', () => rx.got.length === 2);
      // the worker stores the cursor once the receiver's answer is in: a close before that
      // abandons the attempt, and the change is rightly delivered again. Close once it is stored.
      const head = (await get(env.app, '/api/v1/changes?after=now', writer)).body.next_cursor;
      await until('the cursor past the first two', async () => {
        const listed = (await get(env.app, '/api/v1/admin/webhooks', admin)).body as Array<{
          id: number;
          cursor: string;
        }>;
        return listed.find((w) => w.id === sub.id)?.cursor === head;
      });
      // close() returns once every delivery loop has ended: nothing is left to deliver
      await worker.close();
      const during = [await addAsset('R3'), await addAsset('R4')];
      assert.equal(rx.got.length, 2, 'nothing is delivered while stopped');
      worker = await startWorker();
      await until('the rest', () => rx.got.length === 4);
      // past every change: R3 and R4 came once, from the new worker alone
      await caughtUp(sub.id);
      assert.deepEqual(
        rx.got.map((r) => r.json.change.id),
        [...before, ...during],
      );
      await remove(sub.id);
    });

    it('a subscription leased by another live server is left alone; a dead server’s lease is taken over once it runs out', async () => {
      const rx = await receiver();
      const sub = await subscribe({ url: rx.url });
      const lease = (owner: string, until: Date) =>
        env.handle.db
          .updateTable('webhooks')
          .set({ lease_owner: owner, lease_until: until.toISOString() })
          .where('id', '=', sub.id)
          .execute();
      // wait until our worker holds it idle, then hand the lease to "another server"
      await until('the worker to take it', async () => {
        const w = await env.handle.db
          .selectFrom('webhooks')
          .where('id', '=', sub.id)
          .select('lease_owner')
          .executeTakeFirst();
        return w?.lease_owner !== null;
      });
      await worker.close();
      await lease('another-server', new Date(Date.now() + 60_000));
      // a subscription of our worker's beside it: once it has the change, ours has looked at both
      const control = await receiver();
      const beside = await subscribe({ url: control.url });
      worker = await startWorker();
      const id = await addAsset('Leased elsewhere');
      await until('the change delivered beside it', () => control.got.some((r) => r.json.change.id === id));
      await caughtUp(beside.id);
      // and the worker's heartbeat renewed its own lease after that: it has run on past the change
      const leaseUntil = async () =>
        (
          await env.handle.db
            .selectFrom('webhooks')
            .where('id', '=', beside.id)
            .select('lease_until')
            .executeTakeFirstOrThrow()
        ).lease_until;
      const renewed = await leaseUntil();
      await until('a heartbeat after the change', async () => (await leaseUntil()) !== renewed);
      assert.equal(rx.got.length, 0, 'the live holder delivers, not us');
      await remove(beside.id);
      // that server died: its lease runs out, and this one resumes from the stored cursor
      await lease('another-server', new Date(Date.now() - 1000));
      await until('the takeover', () => rx.got.length === 1, 4000);
      assert.equal(rx.got[0]!.json.change.id, id);
      await remove(sub.id);
    });

    it('two servers on one database deliver each change once, in order', async () => {
      const rx = await receiver();
      // on PostgreSQL a pool of its own, as another server process has
      const handle = dialect === 'postgres' ? await openSecondHandle(env) : env.handle;
      const second = await startWorker(handle);
      try {
        const sub = await subscribe({ url: rx.url });
        const ids = [];
        for (let i = 0; i < 10; i++) ids.push(await addAsset(`Shared ${i}`));
        await until('ten deliveries', () => rx.got.length >= 10);
        await caughtUp(sub.id);
        assert.deepEqual(
          rx.got.map((r) => r.json.change.id),
          ids,
        );
        await remove(sub.id);
      } finally {
        await second.close();
        if (handle !== env.handle) await handle.close();
      }
    });
  });
}
