import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import type { ProductionDocument } from '../src/document/schema.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction, smallSeries } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { ALL_SCOPES, importRoundTrip, type Refs } from './support/round-trip.js';

/** A production whose one scene uses `n` assets, each with two released versions and a wip one. */
function bigScene(code: string, n: number): ProductionDocument {
  const base = smallProduction(code);
  const assets = Array.from({ length: n }, (_, i) => ({
    ref: `a${i}`,
    label: `Asset ${i}`,
    kind: 'prop',
    department: i % 2 ? 'vfx' : 'costume',
    status: 'active' as const,
    versions: [
      { version: 1, released: true },
      { version: 2, released: true },
      { version: 3, released: false },
    ],
  }));
  return {
    ...base,
    scenes: [{ ref: 'big', number: '9', slugline: 'EXT. CITY - NIGHT', assets: assets.map((a) => a.ref) }],
    assets,
    shoot_days: Array.from({ length: n }, (_, i) => ({
      day_number: i + 1,
      date: `2026-05-${String((i % 28) + 1).padStart(2, '0')}`,
      scenes: ['big'],
    })),
    approvals: assets.map((a) => ({
      title: `Approve ${a.label}`,
      mode: 'decision' as const,
      department: a.department,
      subject: { node: a.ref },
      steps: ['p-ben'],
    })),
    department_notes: assets.map((a) => ({
      department: a.department,
      node: a.ref,
      summary: `Note ${a.ref}`,
    })),
    deliveries: [],
    engagements: [
      {
        ref: 'eng-big',
        organisation: 'org-pix',
        departments: ['vfx'],
        grants: [{ kind: 'scene', node: 'big' }],
      },
    ],
    script_changes: [],
    activity: [],
  };
}

for (const dialect of DIALECTS) {
  describe(`bundles [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let pw: string;
    let pix: string;
    let reader: string;

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      pw = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      pix = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      reader = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-read' });
    });
    after(() => env.close());

    /**
     * These tests write behind the API's back; every write through it bumps the production's
     * revision in its own transaction (and the bundles' answers are kept by revision), so each
     * direct write here is followed by the same bump.
     */
    const changed = () =>
      env.handle.db
        .updateTable('productions')
        .set((eb) => ({ revision: eb('revision', '+', 1) }))
        .execute();
    const scene = (token: string, headers: Record<string, string> = {}) =>
      call(env.app, 'GET', `/api/v1/bundles/scene/${refs.sc1}`, { token, headers });
    const character = (token: string, headers: Record<string, string> = {}) =>
      call(env.app, 'GET', `/api/v1/bundles/character/${refs['ch-mara']}`, { token, headers });
    /** The scene grant of engagement eng-read, which the expiry tests move in time. */
    const sceneGrantOfEngRead = () =>
      env.handle.db
        .selectFrom('grants')
        .where('engagement_id', '=', refs['eng-read']!)
        .where('kind', '=', 'scene')
        .select('id')
        .executeTakeFirstOrThrow();

    it('scene bundle: every required key, released versions only, unclamped for a production-wide key', async () => {
      const r = await scene(pw);
      assert.equal(r.status, 200);
      const b = r.body;
      assert.deepEqual(Object.keys(b).sort(), [
        'approvals',
        'assets',
        'department_notes',
        'etag',
        'scene',
        'shoot_days',
        'version',
      ]);
      assert.equal(b.version, 1);
      assert.equal(r.headers.etag, b.etag);
      assert.deepEqual(b.scene, {
        node_id: refs.sc1,
        number: '1',
        slugline: 'INT. WARD - NIGHT',
        synopsis: 'Mara arrives.',
        status: 'planned',
        revision_color: 'white',
        elements: { cast: ['Mara'] },
      });
      assert.deepEqual(
        b.assets.map((a: { node_id: number; kind: string }) => [a.node_id, a.kind]),
        [
          [refs['ch-mara'], 'character'],
          [refs['loc-ward'], 'location'],
        ],
      );
      const ward = b.assets[1];
      assert.equal(ward.released_versions.length, 1, 'the wip version 2 is not in a bundle');
      const v = ward.released_versions[0];
      assert.equal(v.id, refs['v-ward-1']);
      assert.equal(v.released, true);
      assert.match(v.media_path, /^\/media\/.+\.png$/);
      assert.deepEqual(
        b.shoot_days.map((d: { id: number }) => d.id),
        [refs.d1, refs.d2],
      );
      assert.deepEqual(b.shoot_days[0], {
        id: refs.d1,
        day_number: 1,
        date: '2026-04-01',
        status: 'scheduled',
        general_call: '07:00',
      });
      assert.equal(b.shoot_days[1].general_call, null);
      assert.deepEqual(
        b.approvals.map((a: { id: number }) => a.id),
        [refs['ap-ward'], refs['ap-mara']],
      );
      assert.deepEqual(b.approvals[0], {
        id: refs['ap-ward'],
        title: 'Ward plates',
        status: 'pending',
        mode: 'decision',
        due: '2026-04-10',
      });
      assert.deepEqual(
        b.department_notes.map((n: { id: number }) => n.id),
        [refs.n1, refs.n2, refs.n3],
      );
      assert.deepEqual(b.department_notes[0], {
        id: refs.n1,
        summary: 'Coat must read wet',
        created_at: '2026-03-02T09:00:00.000Z',
      });
    });

    it("an engagement sees only its departments' approvals and notes, and gets its own ETag", async () => {
      const [all, vfx, costume] = await Promise.all([scene(pw), scene(pix), scene(reader)]);
      assert.deepEqual(
        vfx.body.approvals.map((a: { id: number }) => a.id),
        [refs['ap-ward']],
      );
      assert.deepEqual(
        vfx.body.department_notes.map((n: { id: number }) => n.id),
        [refs.n2],
      );
      assert.deepEqual(
        costume.body.approvals.map((a: { id: number }) => a.id),
        [refs['ap-mara']],
      );
      assert.deepEqual(
        costume.body.department_notes.map((n: { id: number }) => n.id),
        [refs.n1],
      );
      // the clamp only narrows: everything else is the same document
      for (const b of [vfx.body, costume.body]) {
        assert.deepEqual(b.assets, all.body.assets);
        assert.deepEqual(b.shoot_days, all.body.shoot_days);
        assert.deepEqual(b.scene, all.body.scene);
      }
      assert.equal(new Set([all.body.etag, vfx.body.etag, costume.body.etag]).size, 3);
    });

    it('character bundle: costumes, released versions, ingredients de-duplicated across versions', async () => {
      const r = await character(pix);
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body).sort(), ['character', 'costumes', 'etag', 'version']);
      assert.deepEqual(r.body.character, { node_id: refs['ch-mara'], label: 'Mara', status: 'active' });
      assert.equal(r.body.costumes.length, 1);
      const coat = r.body.costumes[0];
      assert.equal(coat.node_id, refs['co-coat']);
      assert.deepEqual(
        coat.released_versions.map((v: { id: number }) => v.id),
        [refs['v-coat-1'], refs['v-coat-3']],
      );
      assert.deepEqual(
        coat.ingredients.map((g: { id: number; label: string }) => [g.id, g.label]),
        [
          [refs['ing-wool'], 'Black wool'],
          [refs['ing-btn'], 'Horn buttons'],
          [refs['ing-wax'], 'Wax coat'],
        ],
      );
      assert.match(coat.ingredients[0].media_path, /^\/media\//);
      assert.equal(coat.ingredients[1].media_path, null);
      assert.equal(coat.ingredients[1].relation, null);
    });

    it('If-None-Match: exact, list, weak, bare and * answer 304 with no body; a stale tag answers 200', async () => {
      const first = await scene(pix);
      const tag = first.body.etag as string;
      for (const inm of [tag, `"stale", ${tag}`, `W/${tag}`, tag.slice(1, -1), '*']) {
        const r = await scene(pix, { 'if-none-match': inm });
        assert.equal(r.status, 304, inm);
        assert.equal(r.text, '');
        assert.equal(r.headers.etag, tag);
      }
      const stale = await scene(pix, { 'if-none-match': '"stale"' });
      assert.equal(stale.status, 200);
      assert.equal(stale.body.etag, tag);
      // another key's tag is not this key's tag
      const other = await scene(pix, { 'if-none-match': (await scene(pw)).body.etag });
      assert.equal(other.status, 200);
      const c = await character(pix);
      assert.equal((await character(pix, { 'if-none-match': c.body.etag })).status, 304);
    });

    it('reach is checked before If-None-Match: * never answers 304 for an unreachable scene', async () => {
      const none = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-none' });
      const r = await scene(none, { 'if-none-match': '*' });
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, { detail: 'scene not found', code: 'not_found' });
    });

    it('the ETag changes after a relevant write and stays after an irrelevant one', async () => {
      const before = (await scene(pix)).body.etag;
      const charBefore = (await character(pix)).body.etag;
      // irrelevant: another scene, money, activity, an approval of another department
      await env.handle.db
        .updateTable('nodes')
        .set({ slugline: 'INT. VAULT - NIGHT' })
        .where('id', '=', refs.sc3!)
        .execute();
      await changed();
      await env.handle.db
        .updateTable('purchase_orders')
        .set({ amount: 1 })
        .where('id', '=', refs.po1!)
        .execute();
      await changed();
      await env.handle.db
        .updateTable('approvals')
        .set({ title: 'Mara look v2' })
        .where('id', '=', refs['ap-mara']!)
        .execute();
      await changed();
      await env.handle.db
        .updateTable('versions')
        .set({ note: 'wip note' })
        .where('id', '=', refs['v-ward-2']!)
        .execute();
      await changed();
      assert.equal((await scene(pix)).body.etag, before, 'nothing this key sees changed');
      assert.equal((await character(pix)).body.etag, charBefore);
      // relevant: a version of a used asset is released
      await env.handle.db
        .updateTable('versions')
        .set({ released: 1 })
        .where('id', '=', refs['v-ward-2']!)
        .execute();
      await changed();
      const after = await scene(pix, { 'if-none-match': before });
      assert.equal(after.status, 200);
      assert.notEqual(after.body.etag, before);
      assert.equal(after.body.assets[1].released_versions.length, 2);
      await env.handle.db
        .updateTable('versions')
        .set({ released: 0 })
        .where('id', '=', refs['v-ward-2']!)
        .execute();
      await changed();
      assert.equal((await scene(pix)).body.etag, before, 'same document, same tag');
      await env.handle.db
        .updateTable('ingredients')
        .set({ label: 'Oiled wax' })
        .where('id', '=', refs['ing-wax']!)
        .execute();
      await changed();
      assert.notEqual((await character(pix)).body.etag, charBefore);
    });

    it('a grant expiring or being revoked takes effect on the next request, no restart', async () => {
      const key = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-read' });
      assert.equal((await scene(key)).status, 200);
      const grant = await sceneGrantOfEngRead();
      // the grant is given an expiry a moment away (a change: the revision moves), then time
      // passes (not a change: the revision stays) and the very next request is refused
      const lapses = Date.now() + 3000;
      await env.handle.db
        .updateTable('grants')
        .set({ expires_at: new Date(lapses).toISOString() })
        .where('id', '=', grant.id)
        .execute();
      await changed();
      assert.equal((await scene(key)).status, 200);
      await new Promise((r) => setTimeout(r, lapses - Date.now() + 50));
      assert.equal((await scene(key)).status, 404);
      const future = new Date(Date.now() + 3600_000).toISOString();
      await env.handle.db
        .updateTable('grants')
        .set({ expires_at: future })
        .where('id', '=', grant.id)
        .execute();
      await changed();
      assert.equal((await scene(key)).status, 200);
      const past = new Date(Date.now() - 1000).toISOString();
      await env.handle.db
        .updateTable('grants')
        .set({ revoked_at: past })
        .where('id', '=', grant.id)
        .execute();
      await changed();
      assert.equal((await scene(key)).status, 404);
      assert.equal((await character(key)).status, 200, 'only the revoked grant stops working');
    });

    it("judges a grant's expiry by the database's clock, not the host's: servers whose clocks drift agree", async () => {
      const key = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-read' });
      const grant = await sceneGrantOfEngRead();
      const expireIn = async (ms: number) => {
        await env.handle.db
          .updateTable('grants')
          .set({ expires_at: new Date(Date.now() + ms).toISOString(), revoked_at: null })
          .where('id', '=', grant.id)
          .execute();
        await changed();
      };
      const withHostClock = async (offsetMs: number) => {
        mock.timers.enable({ apis: ['Date'], now: Date.now() + offsetMs });
        try {
          return (await scene(key)).status;
        } finally {
          mock.timers.reset();
        }
      };
      await expireIn(3600_000);
      assert.equal(
        await withHostClock(2 * 3600_000),
        200,
        'a host two hours ahead still lets the live grant in',
      );
      await expireIn(-1000);
      assert.equal(
        await withHostClock(-3600_000),
        404,
        'a host an hour behind still turns the lapsed grant away',
      );
    });

    it('a bad node id is a 422 naming the field', async () => {
      const r = await get(env.app, '/api/v1/bundles/scene/abc', pw);
      assert.equal(r.status, 422);
      assert.match(r.body.detail, /node_id/);
    });

    it('401 without a key', async () => {
      const r = await get(env.app, `/api/v1/bundles/scene/${refs.sc1}`);
      assert.equal(r.status, 401);
      assert.deepEqual(Object.keys(r.body), ['detail', 'code']);
    });
  });

  describe(`bundles: episodic scenes and query counts [${dialect}]`, () => {
    let env: TestEnv;
    /** Statements run since `start`, leaving out the key's once-a-minute last-used write. */
    const queriesSince = (start: number) =>
      env.queries.sql.slice(start).filter((q) => !/"last_used_at"/.test(q)).length;
    before(async () => {
      env = await createEnv(dialect);
    });
    after(() => env.close());

    it('an episodic scene carries episode_id and episode_code', async () => {
      const { refs } = await env.import(smallSeries('show'));
      const key = await env.mint({ production: 'show', scopes: ['read'] });
      const r = await get(env.app, `/api/v1/bundles/scene/${refs.sc1}`, key);
      assert.equal(r.status, 200);
      assert.equal(r.body.scene.episode_id, refs.ep1);
      assert.equal(r.body.scene.episode_code, '101');
    });

    it('a bundle costs the same number of queries for a scene of 2 assets and one of 40', async () => {
      const counts: Record<string, number> = {};
      for (const [code, n] of [
        ['small', 2],
        ['large', 40],
      ] as const) {
        const { refs } = await env.import(bigScene(code, n));
        for (const [who, engagement] of [
          ['pw', undefined],
          ['eng', 'eng-big'],
        ] as const) {
          const key = await env.mint({
            production: code,
            scopes: ['read'],
            ...(engagement ? { engagement } : {}),
          });
          const url = `/api/v1/bundles/scene/${refs.big}`;
          const start = env.queries.sql.length;
          const r = await get(env.app, url, key);
          assert.equal(r.status, 200);
          assert.equal(r.body.assets.length, n);
          assert.equal(r.body.assets[0].released_versions.length, 2);
          counts[`${code}/${who}`] = queriesSince(start);
          // the same answer again, the production unchanged: served as assembled
          const cachedStart = env.queries.sql.length;
          const headers = { 'if-none-match': r.body.etag as string };
          assert.equal((await call(env.app, 'GET', url, { token: key, headers })).status, 304);
          counts[`${code}/${who}/cached`] = queriesSince(cachedStart);
        }
      }
      assert.equal(counts['small/pw'], counts['large/pw']);
      assert.equal(counts['small/eng'], counts['large/eng']);
      // 1 key lookup + 6 bundle queries; an engagement adds 2 for its grant on the scene and departments
      assert.equal(counts['large/pw'], 7);
      assert.equal(counts['large/eng'], 9);
      // assembled once: then the key lookup (with the revision), and for an engagement its grant
      assert.equal(counts['large/pw/cached'], 1);
      assert.equal(counts['large/eng/cached'], 2);
    });

    it('a character bundle costs a fixed number of queries', async () => {
      const { refs } = await importRoundTrip(env, 'chars').then((r) => ({ refs: r }));
      const key = await env.mint({ production: 'chars', scopes: ['read'], engagement: 'eng-pix' });
      const url = `/api/v1/bundles/character/${refs['ch-mara']}`;
      const start = env.queries.sql.length;
      assert.equal((await get(env.app, url, key)).status, 200);
      // 1 key lookup + the grant on the character + character, costumes, versions, ingredients
      assert.equal(queriesSince(start), 6);
    });
  });
}
