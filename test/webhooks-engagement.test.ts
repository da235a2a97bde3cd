import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../src/app.js';
import { headChangeId } from '../src/modules/changes/repository.js';
import { verifySignature } from '../src/modules/webhooks/signature.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { Receiver, until, type Received } from './support/receiver.js';
import { ALL_SCOPES, importRoundTrip, png, submit, type Refs } from './support/round-trip.js';
import {
  addPackageFile,
  removePackageFile,
  reviewSubmission,
  setDeliveryStatus,
} from './support/turnover-admin.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * Engagement webhooks: a webhook subscribed for an engagement receives exactly what that
 * engagement can see (its turnovers' moves, their sent packages' files, its own submissions and
 * their reviews, its own grants added, revoked and lapsed), never another engagement's.
 */

const TEST_CONFIG = {
  PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32',
  PRODGRAPH_WEBHOOK_TIMEOUT_MS: '2000',
  PRODGRAPH_WEBHOOK_RETRY_BASE_MS: '50',
  PRODGRAPH_WEBHOOK_RETRY_MAX_MS: '400',
};

/** What arrived, as `kind:id:op`, in arrival order. */
const lines = (rx: Receiver) =>
  rx.got.map((r: Received) => {
    const c = r.json.change;
    return `${c.kind}:${c.id}:${c.op}`;
  });

for (const dialect of DIALECTS) {
  describe(`engagement webhooks [${dialect}]`, () => {
    let env: TestEnv;
    let worker: App;
    let refs: Refs;
    let admin: string;
    let pix: string;
    let hal: string;
    let pid: number;
    const receivers: Receiver[] = [];
    const hooks: Record<string, { id: number; secret: string }> = {};
    const rx: Record<string, Receiver> = {};

    const A = '/api/v1/admin/webhooks';

    const receiver = async () => {
      const r = await new Receiver().start();
      receivers.push(r);
      return r;
    };

    /** Every subscription has passed every change made so far (delivered it, or left it out). */
    const settled = async () => {
      const head = await headChangeId(env.handle.db, pid);
      await until(`webhooks past change ${head}`, async () => {
        const rows = await env.handle.db.selectFrom('webhooks').select(['cursor', 'failures']).execute();
        return rows.every((w) => Number(w.cursor) >= head);
      });
    };

    before(async () => {
      env = await createEnv(dialect, TEST_CONFIG);
      refs = await importRoundTrip(env, 'film');
      pid = (
        await env.handle.db
          .selectFrom('productions')
          .where('code', '=', 'film')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
      admin = await env.mint({ production: 'film', scopes: ['admin'] });
      pix = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      hal = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-hal' });
      worker = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await worker.ready();
    });
    after(async () => {
      await worker.close();
      for (const r of receivers) await r.close();
      await env.close();
    });

    it('POST /admin/webhooks takes an engagement_id: unknown or archived is 422, kinds beyond its reach too', async () => {
      const url = 'http://127.0.0.1:9/x';
      for (const body of [
        { url, engagement_id: 999_999 },
        { url, engagement_id: refs['eng-pix'], kinds: ['asset'] },
        { url, engagement_id: 'eng-pix' },
        { url, engagement_id: 0 },
      ]) {
        const r = await call(env.app, 'POST', A, { token: admin, body });
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_field');
        assert.match(r.body.detail, /engagement_id|kinds/);
      }
      const archived = await call(env.app, 'POST', `/api/v1/admin/engagements/${refs['eng-none']}/archive`, {
        token: admin,
      });
      assert.equal(archived.status, 200, archived.text);
      const r = await call(env.app, 'POST', A, {
        token: admin,
        body: { url, engagement_id: refs['eng-none'] },
      });
      assert.equal(r.status, 422);
      assert.match(r.body.detail, /archived/);
      assert.deepEqual((await get(env.app, A, admin)).body, [], 'nothing was subscribed');
    });

    it('subscribes a webhook for an engagement; the list shows engagement_id', async () => {
      for (const [name, engagement] of [
        ['pix', refs['eng-pix']],
        ['hal', refs['eng-hal']],
        ['all', null],
      ] as const) {
        rx[name] = await receiver();
        const r = await call(env.app, 'POST', A, {
          token: admin,
          body: { url: rx[name].url, ...(engagement ? { engagement_id: engagement } : {}) },
        });
        assert.equal(r.status, 201, r.text);
        assert.equal(r.body.engagement_id, engagement);
        hooks[name] = r.body;
      }
      const listed = (await get(env.app, A, admin)).body;
      assert.deepEqual(
        listed.map((w: any) => [w.id, w.engagement_id]),
        [
          [hooks.pix!.id, refs['eng-pix']],
          [hooks.hal!.id, refs['eng-hal']],
          [hooks.all!.id, null],
        ],
      );
    });

    it("each engagement webhook receives exactly its engagement's reach, and nothing of another's", async () => {
      const plates = refs['dl-plates']!;
      const other = refs['dl-other']!;
      const want: Record<'pix' | 'hal', string[]> = { pix: [], hal: [] };
      const P = `delivery:${plates}:updated`;
      const O = `delivery:${other}:updated`;
      // a file added to a package still being prepared: its turnover moved, the file is private
      const p1 = await addPackageFile(env, plates, 'plate1.png', await png('#111', 8));
      want.pix.push(P);
      await settled();
      // sent: pix (submit grant) hears of it; hal holds no grant on it
      await setDeliveryStatus(env, plates, 'sent');
      want.pix.push(P);
      await settled();
      const p2 = await addPackageFile(env, plates, 'plate2.png', await png('#222', 8));
      want.pix.push(`media:${p2.id}:created`, P);
      await settled();
      // each vendor's own work, and its own files
      const s = await submit(env, pix, plates, [
        { name: 'files', filename: 'c.png', content: await png('#333', 8) },
      ]);
      assert.equal(s.statusCode, 200, s.body);
      const mine = JSON.parse(s.body);
      want.pix.push(`submission:${mine.id}:created`, `media:${mine.media[0].id}:created`);
      const h = await submit(env, hal, other, [
        { name: 'files', filename: 'h.png', content: await png('#444', 8) },
      ]);
      assert.equal(h.statusCode, 200, h.body);
      const theirs = JSON.parse(h.body);
      want.hal.push(`submission:${theirs.id}:created`, `media:${theirs.media[0].id}:created`);
      await settled();
      // reviews: each vendor hears of its own
      await reviewSubmission(env, mine.id, 'changes_requested', 'matte edge');
      want.pix.push(`submission:${mine.id}:updated`);
      await reviewSubmission(env, theirs.id, 'accepted', 'fine');
      want.hal.push(`submission:${theirs.id}:updated`);
      await settled();
      // a file taken out of the sent package
      await removePackageFile(env, p2.id);
      want.pix.push(`media:${p2.id}:updated`, P);
      // a file added to hal's delivery while it is a draft: hal's turnover moved, the file is private
      await addPackageFile(env, other, 'draft.png', await png('#555', 8));
      want.hal.push(O);
      await settled();
      // recalled: a status move of a turnover pix holds
      await setDeliveryStatus(env, plates, 'ready');
      want.pix.push(P);
      await settled();
      // taken out while recalled: never shown, so the file is never named
      await removePackageFile(env, p1.id);
      want.pix.push(P);
      await settled();
      // a grant of pix's own on hal's delivery: pix hears of the grant and, now, of that turnover
      const g = await call(env.app, 'POST', '/api/v1/admin/grants', {
        token: admin,
        body: { engagement_id: refs['eng-pix'], kind: 'delivery', delivery_id: other, access: 'read' },
      });
      assert.equal(g.status, 201, g.text);
      want.pix.push(`grant:${g.body.id}:created`);
      await settled();
      await setDeliveryStatus(env, other, 'ready');
      await setDeliveryStatus(env, other, 'sent');
      want.pix.push(O, O);
      want.hal.push(O, O);
      await settled();
      const revoked = await call(env.app, 'POST', `/api/v1/admin/grants/${g.body.id}/revoke`, {
        token: admin,
      });
      assert.equal(revoked.status, 200, revoked.text);
      want.pix.push(`grant:${g.body.id}:retired`);
      await settled();
      // with the grant gone, hal's delivery moves unseen by pix
      await setDeliveryStatus(env, other, 'accepted');
      want.hal.push(O);
      await settled();
      await until(
        'every event in',
        () => rx.pix!.got.length >= want.pix.length && rx.hal!.got.length >= want.hal.length,
      );
      assert.deepEqual(lines(rx.pix!), want.pix);
      assert.deepEqual(lines(rx.hal!), want.hal);
      // what each body carries: ids and kinds, the engagement, no actor; signed with its own secret
      for (const [name, eng] of [
        ['pix', refs['eng-pix']],
        ['hal', refs['eng-hal']],
      ] as const) {
        for (const r of rx[name]!.got) {
          assert.deepEqual(Object.keys(r.json).sort(), [
            'change',
            'engagement_id',
            'production',
            'webhook_id',
          ]);
          assert.equal((r.json as any).engagement_id, eng);
          assert.equal(r.json.webhook_id, hooks[name]!.id);
          assert.equal((r.json.change as any).actor, null);
          assert.deepEqual(Object.keys(r.json.change).sort(), ['actor', 'at', 'cursor', 'id', 'kind', 'op']);
          assert.ok(verifySignature(hooks[name]!.secret, r.headers['prodgraph-signature'] as string, r.body));
        }
      }
      // the production-wide webhook is as it was: every change, with its actor, no engagement_id
      const all = rx.all!.got.map((r) => r.json);
      assert.ok(all.every((e: any) => !('engagement_id' in e)));
      assert.ok(all.every((e: any) => e.change.actor !== null));
      for (const line of [...want.pix, ...want.hal, `media:${p1.id}:created`, `media:${p1.id}:updated`]) {
        assert.ok(lines(rx.all!).includes(line), `the production-wide webhook has ${line}`);
      }
    });

    it("a grant's expiry is announced to its engagement once it passes, and to no one else", async () => {
      const soon = new Date(Date.now() + 2500).toISOString();
      const grant = async (engagement: number, delivery: number) => {
        const r = await call(env.app, 'POST', '/api/v1/admin/grants', {
          token: admin,
          body: {
            engagement_id: engagement,
            kind: 'delivery',
            delivery_id: delivery,
            access: 'read',
            expires_at: soon,
          },
        });
        assert.equal(r.status, 201, r.text);
        return r.body.id as number;
      };
      const before = { pix: rx.pix!.got.length, hal: rx.hal!.got.length };
      const pixGrant = await grant(refs['eng-pix']!, refs['dl-other']!);
      const halGrant = await grant(refs['eng-hal']!, refs['dl-plates']!);
      await until(
        'both expiries announced',
        () =>
          lines(rx.pix!).includes(`grant:${pixGrant}:expired`) &&
          lines(rx.hal!).includes(`grant:${halGrant}:expired`),
      );
      // in the order things happened, whatever the worker's lag: made, then lapsed
      assert.deepEqual(lines(rx.pix!).slice(before.pix), [
        `grant:${pixGrant}:created`,
        `grant:${pixGrant}:expired`,
      ]);
      assert.deepEqual(lines(rx.hal!).slice(before.hal), [
        `grant:${halGrant}:created`,
        `grant:${halGrant}:expired`,
      ]);
      const expired = rx.pix!.got.at(-1)!;
      assert.equal(expired.json.change.kind, 'grant');
      assert.equal((expired.json.change as any).at, soon);
      assert.ok(Date.now() >= Date.parse(soon), 'announced once it passed, not before');
      assert.equal(
        expired.headers['prodgraph-delivery'],
        `${hooks.pix!.id}.expired.${pixGrant}.${Date.parse(soon)}`,
      );
      assert.ok(
        verifySignature(hooks.pix!.secret, expired.headers['prodgraph-signature'] as string, expired.body),
      );
      // the production-wide webhook is never told of an expiry: nothing was written
      assert.ok(!lines(rx.all!).some((l) => l.endsWith(':expired')));
      // the delivery log names it
      let log: any[] = [];
      await until('the expiry logged', async () => {
        log = (await get(env.app, `${A}/${hooks.pix!.id}/deliveries`, admin)).body;
        return log[0]?.change.op === 'expired';
      });
      assert.deepEqual(
        { kind: log[0].change.kind, id: log[0].change.id, op: log[0].change.op, delivered: log[0].delivered },
        { kind: 'grant', id: pixGrant, op: 'expired', delivered: true },
      );
      // announced once: a restart of the worker resumes after it. Once hal's delivery is logged
      // too: the receiver has it as soon as it arrives, and an attempt the worker has not yet
      // seen answered when it stops is abandoned and made again (at least once), by design
      await until('hal’s expiry logged', async () => {
        const hal = (await get(env.app, `${A}/${hooks.hal!.id}/deliveries`, admin)).body;
        return hal[0]?.change.op === 'expired' && hal[0]?.delivered === true;
      });
      await worker.close();
      worker = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await worker.ready();
      const seen = rx.pix!.got.length;
      await setDeliveryStatus(env, refs['dl-plates']!, 'sent');
      await settled();
      assert.deepEqual(lines(rx.pix!).slice(seen), [`delivery:${refs['dl-plates']}:updated`]);
      assert.equal(lines(rx.hal!).filter((l) => l === `grant:${halGrant}:expired`).length, 1);
    });

    it('an archived engagement is told nothing more', async () => {
      const r = await call(env.app, 'POST', `/api/v1/admin/engagements/${refs['eng-hal']}/archive`, {
        token: admin,
      });
      assert.equal(r.status, 200, r.text);
      const seen = rx.hal!.got.length;
      // a file added to the package of hal's accepted turnover: hal would hear of it, were it not archived
      await addPackageFile(env, refs['dl-other']!, 'late.png', await png('#666', 8));
      await settled();
      assert.equal(rx.hal!.got.length, seen);
    });
  });
}
