import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { dbClock } from '../src/db/clock.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { Receiver, until, type Received } from './support/receiver.js';
import { startServer, type ServerProcess } from './support/server-process.js';

/*
 * Webhook leases across server processes on one database (PostgreSQL, or one SQLite file on one
 * machine): a lease is kept on the database's clock and renewed by a heartbeat, so a SIGKILLed deliverer's subscription is taken
 * over within seconds and the change it had in flight is delivered again under the same
 * `Prodgraph-Delivery` id; and a host whose clock is ten minutes off cannot take a lease a live
 * server holds.
 */

const ALLOW = { PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.0/8' };

for (const dialect of DIALECTS) {
  describe(`webhook leases across server processes [${dialect}]`, () => {
    let env: TestEnv;
    let admin: string;
    const servers: ServerProcess[] = [];
    const receivers: Receiver[] = [];

    const start = async (extra: Record<string, string> = {}) => {
      const s = await startServer(env, { ...ALLOW, ...extra });
      servers.push(s);
      return s;
    };
    const receiver = async () => {
      const r = await new Receiver().start();
      receivers.push(r);
      return r;
    };
    const call = async (server: ServerProcess, path: string, body: unknown) => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.ok(res.ok, `${path}: ${res.status} ${await res.clone().text()}`);
      return (await res.json()) as { id: number; node_id: number };
    };
    const addAsset = async (server: ServerProcess, label: string) =>
      (await call(server, '/assets', { label })).node_id;
    const lease = (id: number) =>
      env.handle.db
        .selectFrom('webhooks')
        .where('id', '=', id)
        .select(['lease_owner', 'lease_until'])
        .executeTakeFirstOrThrow();
    const leaseOwner = async (id: number) => (await lease(id)).lease_owner;
    const of = (rx: Receiver, assetId: number): Received[] =>
      rx.got.filter((r) => r.json.change.kind === 'asset' && r.json.change.id === assetId);

    before(async () => {
      env = await createEnv(dialect, ALLOW);
      await env.import(smallProduction('film'));
      admin = await env.mint({ production: 'film', scopes: ['read', 'write', 'admin'] });
    });

    const stopAll = async () => {
      for (const s of servers) {
        if (s.child.exitCode === null && s.child.signalCode === null) {
          s.child.kill('SIGTERM');
          await s.exited;
        }
      }
    };

    after(async () => {
      await stopAll();
      for (const r of receivers) await r.close();
      await env?.close();
    });

    it('a SIGKILLed deliverer’s subscription is taken over within 5 s, the change it had in flight delivered again under the same id', async (t) => {
      const rx = await receiver();
      const a = await start();
      const sub = await call(a, '/admin/webhooks', { url: rx.url });
      const first = await addAsset(a, 'Before the crash');
      await until('the first delivery, by a', () => of(rx, first).length === 1);
      const b = await start();
      // a's attempt at the next change is left unanswered: a dies with it in flight
      let held = true;
      rx.answer = () => (held ? new Promise<number>(() => undefined) : 200);
      const inFlight = await addAsset(b, 'In flight');
      await until('a’s attempt at it', () => of(rx, inFlight).length === 1);
      // a's heartbeat keeps its lease while the attempt waits longer than a lease lasts, and b,
      // scanning every second, leaves it alone
      const leased = await lease(sub.id);
      await until(
        'a heartbeat a lease length later',
        async () => Date.parse((await lease(sub.id)).lease_until!) > Date.parse(leased.lease_until!) + 3000,
      );
      assert.equal((await lease(sub.id)).lease_owner, leased.lease_owner);
      assert.equal(of(rx, inFlight).length, 1, 'nobody delivered it again meanwhile');
      held = false;
      const killedAt = Date.now();
      a.child.kill('SIGKILL');
      await a.exited;
      await until('the redelivery, by b', () => of(rx, inFlight).length === 2, 30_000);
      const failoverMs = of(rx, inFlight)[1]!.at - killedAt;
      t.diagnostic(`failover: the next delivery came ${failoverMs} ms after the SIGKILL`);
      assert.ok(failoverMs <= 5000, `the redelivery came ${failoverMs} ms after the SIGKILL`);
      const [lost, again] = of(rx, inFlight);
      assert.equal(again!.headers['prodgraph-delivery'], lost!.headers['prodgraph-delivery']);
      assert.match(String(again!.headers['prodgraph-delivery']), new RegExp(`^${sub.id}\\.\\d+$`));
      // b holds it now and delivers what comes next once
      const next = await addAsset(b, 'After the crash');
      await until('the next delivery, by b', () => of(rx, next).length === 1);
      assert.equal(of(rx, first).length, 1, 'what a recorded as delivered is not delivered again');
    });

    it('a server whose host clock is ten minutes ahead cannot take a lease a live server holds', async () => {
      await stopAll(); // the servers the test before left: the skewed one is alone here
      const rx = await receiver();
      const probe = await receiver();
      const made = await env.app.inject({
        method: 'POST',
        url: '/api/v1/admin/webhooks',
        headers: { authorization: `Bearer ${admin}` },
        payload: { url: rx.url },
      });
      assert.equal(made.statusCode, 201, made.body);
      const sub = made.json<{ id: number }>();
      // a live server's lease, five minutes long on the database's clock: run out already by the
      // skewed host's clock (ten minutes ahead), not by the database's. The test plays that
      // server, so no load on this machine can make it miss a heartbeat and lose it for real.
      const db = env.handle.db;
      const holdLease = (ms: number) =>
        db
          .updateTable('webhooks')
          .set({ lease_owner: 'a live server', lease_until: dbClock(db, ms) })
          .where('id', '=', sub.id)
          .execute();
      await holdLease(5 * 60_000);
      const skewed = await start({
        NODE_OPTIONS: `--import ${pathToFileURL(join(import.meta.dirname, 'support', 'skewed-clock.js')).href}`,
        PRODGRAPH_TEST_CLOCK_SKEW_MS: String(10 * 60_000),
      });
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push(await addAsset(skewed, `Skewed ${i}`));
      // a free subscription made after those changes: the skewed server's next look for work
      // takes it, in the same statement that judges the held one
      await call(skewed, '/admin/webhooks', { url: probe.url });
      const seen = await addAsset(skewed, 'For the free subscription');
      await until(
        'the free subscription’s delivery, by the skewed server',
        () => of(probe, seen).length === 1,
      );
      assert.equal(await leaseOwner(sub.id), 'a live server', 'the live lease never changed hands');
      assert.equal(rx.got.length, 0, 'nothing delivered under a live lease');
      // the live server is gone: once its lease has run out on the database's clock, the skewed
      // server takes it and delivers each change once
      await holdLease(-1);
      await until('every delivery, by the skewed server', () => ids.every((id) => of(rx, id).length >= 1));
      for (const id of ids) assert.equal(of(rx, id).length, 1, `asset ${id} delivered once`);
      assert.notEqual(await leaseOwner(sub.id), 'a live server');
    });
  });
}
