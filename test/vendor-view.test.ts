import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { ALL_SCOPES, importRoundTrip, png, submit, type Refs } from './support/round-trip.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const ENGAGEMENTS = ['eng-pix', 'eng-hal', 'eng-read', 'eng-rev', 'eng-exp', 'eng-none'];
const A = '/api/v1/admin/engagements';

/** Status and body, with what legitimately differs between two callers taken out. */
const seen = (r: { status: number; body: any; text: string }) => ({
  status: r.status,
  body: r.body ?? r.text,
});

for (const dialect of DIALECTS) {
  describe(`see as vendor: the admin view answers exactly what the engagement's keys get [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let admin: string;
    let wide: string;
    const keys: Record<string, string> = {};
    let nodes: number[];
    let mediaIds: number[];

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      await importRoundTrip(env, 'other');
      admin = await env.mint({ production: 'film', scopes: ['admin'] });
      wide = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      for (const eng of ENGAGEMENTS) {
        keys[eng] = await env.mint({ production: 'film', engagement: eng, scopes: ALL_SCOPES });
      }
      const r = await submit(env, keys['eng-pix'], refs['dl-plates']!, [
        { name: 'files', filename: 'comp.png', content: await png('#f0f'), contentType: 'image/png' },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      const all = await env.handle.db.selectFrom('nodes').select('id').execute();
      nodes = all.map((n) => n.id);
      const media = await env.handle.db.selectFrom('media').select('id').execute();
      mediaIds = [...media.map((m) => m.id), 999_999];
    });
    after(() => env.close());

    it('every bundle, scene or character, of every node: the same status and body as the vendor key', async () => {
      for (const eng of ENGAGEMENTS) {
        const id = refs[eng]!;
        for (const kind of ['scene', 'character']) {
          for (const node of [...nodes, 999_999]) {
            const vendor = await get(env.app, `/api/v1/bundles/${kind}/${node}`, keys[eng]);
            const view = await get(env.app, `${A}/${id}/view/bundles/${kind}/${node}`, admin);
            assert.deepEqual(seen(view), seen(vendor), `${eng} ${kind} ${node}`);
          }
        }
      }
    });

    it('every media object: fetchable through the view exactly when the vendor key may fetch it, byte for byte', async () => {
      let reached = 0;
      for (const eng of ENGAGEMENTS) {
        const id = refs[eng]!;
        for (const m of mediaIds) {
          const vendor = await env.app.inject({
            url: `/api/v1/media/${m}/content`,
            headers: { authorization: `Bearer ${keys[eng]}` },
          });
          const view = await env.app.inject({
            url: `${A}/${id}/view/media/${m}/content`,
            headers: { authorization: `Bearer ${admin}` },
          });
          assert.equal(view.statusCode, vendor.statusCode, `${eng} media ${m}`);
          assert.deepEqual(view.rawPayload, vendor.rawPayload, `${eng} media ${m}`);
          assert.equal(view.headers['content-type'], vendor.headers['content-type']);
          assert.equal(view.headers.etag, vendor.headers.etag);
          if (vendor.statusCode === 200) reached++;
        }
      }
      assert.ok(reached >= 6, `only ${reached} media reached: the fixture should grant some`);
    });

    it('the summary: bundles, turnovers and money exactly as the vendor routes answer them, and its submissions', async () => {
      for (const eng of ENGAGEMENTS) {
        const r = await get(env.app, `${A}/${refs[eng]}/view`, admin);
        assert.equal(r.status, 200, r.text);
        const v = r.body;
        assert.equal(v.engagement.id, refs[eng]);
        assert.equal(v.reaches, true);
        assert.deepEqual(v.bundles, (await get(env.app, '/api/v1/bundles', keys[eng])).body, eng);
        assert.deepEqual(v.turnovers, (await get(env.app, '/api/v1/turnovers', keys[eng])).body, eng);
        assert.deepEqual(
          v.purchase_orders,
          (await get(env.app, '/api/v1/purchase-orders', keys[eng])).body,
          eng,
        );
        // the listed bundles are exactly those the vendor is answered
        for (const kind of ['scene', 'character'] as const) {
          const listed = v.bundles.filter((b: any) => b.kind === kind).map((b: any) => b.node_id);
          const open: number[] = [];
          for (const node of nodes) {
            if ((await get(env.app, `/api/v1/bundles/${kind}/${node}`, keys[eng])).status === 200)
              open.push(node);
          }
          assert.deepEqual([...listed].sort(), open.sort(), `${eng} ${kind}s`);
        }
      }
      const pix = (await get(env.app, `${A}/${refs['eng-pix']}/view`, admin)).body;
      assert.deepEqual(
        pix.bundles.map((b: any) => [b.kind, b.node_id, b.number ?? b.label]),
        [
          ['scene', refs.sc1, '1'],
          ['character', refs['ch-mara'], 'Mara'],
        ],
      );
      assert.equal(pix.turnovers[0].can_submit, true);
      assert.equal(pix.submissions.length, 1);
      assert.equal(pix.submissions[0].media[0].label, 'comp.png');
      assert.equal((await get(env.app, `${A}/${refs['eng-hal']}/view`, admin)).body.submissions.length, 0);
    });

    it('a grant revoked or added shows on the very next request, an archived engagement reaches nothing', async () => {
      const eng = refs['eng-read']!;
      const grants = (await get(env.app, `/api/v1/admin/grants?engagement_id=${eng}`, admin)).body;
      const scene = grants.find((g: any) => g.kind === 'scene');
      const scenes = (view: any) =>
        view.bundles.filter((b: any) => b.kind === 'scene').map((b: any) => b.node_id);
      const before = (await get(env.app, `${A}/${eng}/view`, admin)).body;
      assert.deepEqual(scenes(before), [refs.sc1]);
      const revoked = await call(env.app, 'POST', `/api/v1/admin/grants/${scene.id}/revoke`, {
        token: admin,
      });
      assert.equal(revoked.status, 200);
      assert.deepEqual(scenes((await get(env.app, `${A}/${eng}/view`, admin)).body), []);
      assert.equal((await get(env.app, `${A}/${eng}/view/bundles/scene/${refs.sc1}`, admin)).status, 404);
      const added = await call(env.app, 'POST', '/api/v1/admin/grants', {
        token: admin,
        body: { engagement_id: eng, kind: 'scene', node_id: refs.sc3 },
      });
      assert.equal(added.status, 201, added.text);
      assert.deepEqual(scenes((await get(env.app, `${A}/${eng}/view`, admin)).body), [refs.sc3]);
      assert.equal((await get(env.app, `${A}/${eng}/view/bundles/scene/${refs.sc3}`, admin)).status, 200);

      const archived = await call(env.app, 'POST', `${A}/${eng}/archive`, { token: admin });
      assert.equal(archived.status, 200);
      const gone = (await get(env.app, `${A}/${eng}/view`, admin)).body;
      assert.equal(gone.reaches, false);
      assert.deepEqual([gone.bundles, gone.turnovers, gone.submissions], [[], [], []]);
      assert.equal((await get(env.app, `${A}/${eng}/view/bundles/scene/${refs.sc3}`, admin)).status, 404);
    });

    it('refuses without a key, without admin, to a vendor key; another production’s engagement is 404 like a missing one', async () => {
      const other = (
        await env.handle.db
          .selectFrom('engagements as e')
          .innerJoin('productions as p', 'p.id', 'e.production_id')
          .where('p.code', '=', 'other')
          .select('e.id')
          .executeTakeFirstOrThrow()
      ).id;
      const urls = (id: number) => [
        `${A}/${id}/view`,
        `${A}/${id}/view/bundles/scene/${refs.sc1}`,
        `${A}/${id}/view/bundles/character/${refs['ch-mara']}`,
        `${A}/${id}/view/media/1/content`,
      ];
      for (const url of urls(refs['eng-pix']!)) {
        assert.equal((await get(env.app, url)).status, 401, url);
        assert.equal((await get(env.app, url, wide)).status, 403, url);
        assert.equal((await get(env.app, url, keys['eng-pix'])).status, 403, url);
      }
      const missing = await Promise.all(urls(999_999).map((u) => get(env.app, u, admin)));
      const foreign = await Promise.all(urls(other).map((u) => get(env.app, u, admin)));
      missing.forEach((m, i) => {
        assert.equal(m.status, 404);
        assert.equal(foreign[i]!.status, 404);
        assert.deepEqual(foreign[i]!.body, m.body);
      });
    });

    it('money: the view shows what a key holding read:money gets, whatever the engagement’s keys hold', async () => {
      const narrow = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read'] });
      assert.equal((await get(env.app, '/api/v1/purchase-orders', narrow)).status, 403);
      const v = (await get(env.app, `${A}/${refs['eng-pix']}/view`, admin)).body;
      assert.deepEqual(
        v.purchase_orders,
        (await get(env.app, '/api/v1/purchase-orders', keys['eng-pix'])).body,
      );
      assert.ok(v.purchase_orders.purchase_orders.length > 0);
    });

    it('GET /key tells any key what it is, never its token', async () => {
      const me = await get(env.app, '/api/v1/key', keys['eng-pix']);
      assert.equal(me.status, 200);
      assert.deepEqual(me.body.scopes, ['read', 'write', 'submit:turnover', 'read:money']);
      assert.equal(me.body.production.code, 'film');
      assert.equal(me.body.engagement.id, refs['eng-pix']);
      assert.equal(me.body.engagement.organisation, 'Pixelworks Ltd');
      assert.ok(!me.text.includes(keys['eng-pix']!.slice(12)));
      const a = await get(env.app, '/api/v1/key', admin);
      assert.deepEqual(a.body.scopes, ['admin']);
      assert.equal(a.body.engagement, null);
      assert.equal((await get(env.app, '/api/v1/key')).status, 401);
    });
  });
}
