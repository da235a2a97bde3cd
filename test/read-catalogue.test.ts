import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { contactLeaks, demoContacts, loadDemo, recordingGet } from './support/read.js';

const SCENE_KEYS = [
  'elements',
  'node_id',
  'number',
  'revision_color',
  'slugline',
  'status',
  'synopsis',
  'updated_at',
];
const ROW_KEYS = ['department', 'kind', 'label', 'node_id', 'status', 'updated_at', 'versions'];

for (const dialect of DIALECTS) {
  describe(`read surface: scenes, assets, people, production stats [${dialect}]`, () => {
    let env: TestEnv;
    let series: string;
    let film: string;
    let seriesRefs: Record<string, number>;
    let filmRefs: Record<string, number>;
    const get = recordingGet();

    before(async () => {
      env = await createEnv(dialect);
      seriesRefs = (await loadDemo(env, 'episodic')).refs;
      filmRefs = (await loadDemo(env, 'single')).refs;
      series = await env.mint({ production: 'nightfall', scopes: ['read'] });
      film = await env.mint({ production: 'lanternfall', scopes: ['read'] });
    });
    after(() => env.close());

    it('GET /scenes on an episodic production: script order, episode keys on every scene', async () => {
      const r = await get(env.app, '/api/v1/scenes', series);
      assert.equal(r.status, 200);
      assert.equal(r.body[0].node_id, seriesRefs['sc101-1']);
      assert.deepEqual(Object.keys(r.body[0]).sort(), [...SCENE_KEYS, 'episode_code', 'episode_id'].sort());
      assert.deepEqual(
        [...new Set(r.body.map((s: { episode_code: string }) => s.episode_code))],
        ['101', '102', '103'],
        'script order runs through the episodes in order',
      );
      const omitted = r.body.find((s: { node_id: number }) => s.node_id === seriesRefs['sc101-12a']);
      assert.equal(omitted.status, 'omitted');
      assert.equal(omitted.revision_color, 'pink');
      assert.equal(r.body[0].episode_id, seriesRefs.ep101);
      assert.ok(Array.isArray(r.body[0].elements.cast));
    });

    it('GET /scenes on a single production: the episode keys are absent, not null', async () => {
      const r = await get(env.app, '/api/v1/scenes', film);
      assert.equal(r.status, 200);
      assert.ok(r.body.length > 0);
      for (const s of r.body) assert.deepEqual(Object.keys(s).sort(), SCENE_KEYS);
    });

    it('GET /assets lists every node but scenes, rows without media', async () => {
      for (const token of [series, film]) {
        const r = await get(env.app, '/api/v1/assets', token);
        assert.equal(r.status, 200);
        assert.ok(r.body.length > 10);
        for (const row of r.body) {
          assert.deepEqual(Object.keys(row).sort(), ROW_KEYS);
          assert.notEqual(row.kind, 'scene');
        }
        assert.doesNotMatch(r.text, /media_path|\/media\//);
      }
    });

    it('GET /assets filters by department, kind, status and released, and they combine', async () => {
      const all = (await get(env.app, '/api/v1/assets', series)).body as Array<Record<string, unknown>>;
      const costume = await get(env.app, '/api/v1/assets?department=costume', series);
      assert.deepEqual(
        costume.body,
        all.filter((a) => a.department === 'costume'),
      );
      const characters = await get(env.app, '/api/v1/assets?kind=character', series);
      assert.ok(characters.body.length >= 3);
      assert.deepEqual(
        characters.body,
        all.filter((a) => a.kind === 'character'),
      );
      const blocked = await get(env.app, '/api/v1/assets?status=active', series);
      assert.deepEqual(
        blocked.body,
        all.filter((a) => a.status === 'active'),
      );
      const both = await get(env.app, '/api/v1/assets?kind=costume&department=costume&status=active', series);
      assert.deepEqual(
        both.body,
        all.filter((a) => a.kind === 'costume' && a.department === 'costume' && a.status === 'active'),
      );
      for (const value of ['1', 'true']) {
        const released = await get(env.app, `/api/v1/assets?released=${value}`, series);
        assert.ok(released.body.length > 0 && released.body.length < all.length);
        assert.ok(released.body.some((a: { node_id: number }) => a.node_id === seriesRefs['ch-mara']));
        for (const a of released.body) assert.ok(a.versions > 0);
      }
      for (const value of ['0', 'false']) {
        assert.deepEqual((await get(env.app, `/api/v1/assets?released=${value}`, series)).body, all);
      }
    });

    it('GET /assets refuses a value a filter does not take, naming the filter', async () => {
      for (const [query, field] of [
        ['department=nope', 'department'],
        ['department=', 'department'],
        ['kind=scene', 'kind'],
        ['kind=', 'kind'],
        ['status=omitted', 'status'],
        ['status=bogus', 'status'],
        ['released=yes', 'released'],
        ['released=2', 'released'],
      ]) {
        const r = await get(env.app, `/api/v1/assets?${query}`, series);
        assert.equal(r.status, 422, query);
        assert.match(r.body.detail, new RegExp(`^${field}: `), query);
      }
    });

    it('GET /assets/{node_id}: released versions in full, unreleased as locked stubs, scenes and costumes', async () => {
      const r = await get(env.app, `/api/v1/assets/${seriesRefs['ch-mara']}`, series);
      assert.equal(r.status, 200);
      assert.equal(r.body.label, 'Mara Quinn');
      assert.equal(r.body.kind, 'character');
      assert.equal(r.body.department, 'costume');
      const [v1, v2] = r.body.versions;
      assert.equal(v1.released, true);
      assert.equal(v1.locked, false);
      assert.match(v1.media_path, /^\/media\/.+\.jpg$/);
      assert.equal(v1.note, 'First look, approved at camera test.');
      assert.equal(v1.created_by, 'Ana Ruiz');
      assert.deepEqual(v2, {
        id: seriesRefs['v-mara-2'],
        version: 2,
        variant: 'Episode 103',
        status: 'review',
        released: false,
        locked: true,
        // a locked stub still shows the notes landed on it (none here)
        notes: [],
      });
      assert.deepEqual(
        r.body.costumes.map((c: { node_id: number }) => c.node_id),
        [seriesRefs['co-mara-coat'], seriesRefs['co-mara-scrubs']],
      );
      assert.deepEqual(Object.keys(r.body.costumes[0]).sort(), ROW_KEYS);
      assert.ok(r.body.scenes.length > 3);
      assert.deepEqual(Object.keys(r.body.scenes[0]).sort(), [
        'episode_code',
        'episode_id',
        'node_id',
        'number',
        'slugline',
        'status',
      ]);
      assert.equal('worn_by' in r.body, false);
    });

    it('GET /assets/{node_id}: notes and ingredients of released versions, the wearers of a costume', async () => {
      const coat = seriesRefs['co-mara-coat']!;
      const released = await env.handle.db
        .selectFrom('versions')
        .where('node_id', '=', coat)
        .where('released', '=', 1)
        .select('id')
        .orderBy('version')
        .executeTakeFirstOrThrow();
      await env.handle.db
        .insertInto('version_notes')
        .values({
          production_id: (
            await env.handle.db
              .selectFrom('nodes')
              .where('id', '=', coat)
              .select('production_id')
              .executeTakeFirstOrThrow()
          ).production_id,
          version_id: released.id,
          text: 'Hem reads dry on camera',
          author: 'Femi Adeyemi',
          created_at: '2026-11-01T10:00:00.000Z',
        })
        .execute();
      const r = await get(env.app, `/api/v1/assets/${coat}`, series);
      assert.equal(r.status, 200);
      const first = r.body.versions.find((v: { id: number }) => v.id === released.id);
      assert.deepEqual(
        first.notes.map((n: { text: string; author: string }) => [n.text, n.author]),
        [['Hem reads dry on camera', 'Femi Adeyemi']],
      );
      const withIngredients = r.body.versions.filter(
        (v: { released: boolean; ingredients?: unknown[] }) => v.released && v.ingredients!.length > 0,
      );
      assert.ok(withIngredients.length > 0, 'the demo coat has ingredients');
      const ingredient = withIngredients[0].ingredients[0];
      assert.deepEqual(Object.keys(ingredient).sort(), [
        'id',
        'kind',
        'label',
        'media_id',
        'media_path',
        'relation',
      ]);
      for (const v of r.body.versions.filter((x: { released: boolean }) => !x.released)) {
        assert.deepEqual(Object.keys(v).sort(), [
          'id',
          'locked',
          'notes',
          'released',
          'status',
          'variant',
          'version',
        ]);
      }
      assert.deepEqual(
        r.body.worn_by.map((c: { node_id: number }) => c.node_id),
        [seriesRefs['ch-mara']],
      );
      assert.equal('costumes' in r.body, false);
    });

    it('GET /assets/{node_id} on a single production has no episode keys on its scenes', async () => {
      const rows = (await get(env.app, '/api/v1/assets?kind=character', film)).body;
      const r = await get(env.app, `/api/v1/assets/${rows[0].node_id}`, film);
      assert.equal(r.status, 200);
      assert.ok(r.body.scenes.length > 0);
      for (const s of r.body.scenes) assert.equal('episode_id' in s || 'episode_code' in s, false);
      assert.ok(Array.isArray(r.body.costumes));
    });

    it("GET /assets/{node_id}: a scene's id, an unknown id and another production's id answer the same 404", async () => {
      const scene = await get(env.app, `/api/v1/assets/${seriesRefs['sc101-1']}`, series);
      const unknown = await get(env.app, '/api/v1/assets/999999', series);
      const foreign = await get(
        env.app,
        `/api/v1/assets/${filmRefs[Object.keys(filmRefs).find((k) => k.startsWith('ch-'))!]}`,
        series,
      );
      for (const r of [scene, unknown, foreign]) {
        assert.equal(r.status, 404);
        assert.deepEqual(r.body, { detail: 'asset not found', code: 'not_found' });
      }
      const bad = await get(env.app, '/api/v1/assets/abc', series);
      assert.equal(bad.status, 422);
      assert.match(bad.body.detail, /^node_id: /);
    });

    it('GET /people: name, role, department and flags, never a contact detail', async () => {
      for (const token of [series, film]) {
        const r = await get(env.app, '/api/v1/people', token);
        assert.equal(r.status, 200);
        assert.equal(r.body.length, 14);
        for (const p of r.body) {
          assert.deepEqual(Object.keys(p).sort(), [
            'department',
            'id',
            'is_admin',
            'is_hod',
            'name',
            'role',
            'updated_at',
          ]);
        }
        assert.doesNotMatch(r.text, /@|\+44/);
      }
      const { updated_at: stamped, ...niamh } = (await get(env.app, '/api/v1/people', series)).body[0];
      assert.match(stamped, /^\d{4}-\d\d-\d\dT.*Z$/);
      assert.deepEqual(niamh, {
        id: seriesRefs['p-niamh'],
        name: 'Niamh Gallagher',
        role: 'Producer',
        department: 'production',
        is_hod: true,
        is_admin: true,
      });
    });

    it("GET /production's stats match what the other routes return", async () => {
      for (const token of [series, film]) {
        const production = (await get(env.app, '/api/v1/production', token)).body;
        const departments = (await get(env.app, '/api/v1/departments', token)).body;
        const scenes = (await get(env.app, '/api/v1/scenes', token)).body;
        const assets = (await get(env.app, '/api/v1/assets', token)).body;
        const pending = (await get(env.app, '/api/v1/approvals?status=pending', token)).body;
        const deliveries = (await get(env.app, '/api/v1/deliveries', token)).body as Array<{
          status: string;
        }>;
        assert.deepEqual(production.stats, {
          departments: departments.length,
          open_approvals: pending.length,
          deliveries_in_flight: deliveries.filter((d) => ['blocked', 'ready', 'sent'].includes(d.status))
            .length,
          scenes: scenes.length,
          nodes: scenes.length + assets.length,
        });
        assert.ok(production.stats.open_approvals > 0 && production.stats.deliveries_in_flight > 0);
      }
    });

    it('no response of this file carries an email or a phone from the fixtures', () => {
      const contacts = demoContacts();
      assert.ok(contacts.length >= 28);
      assert.ok(get.seen.length > 20);
      const leaks = get.seen.flatMap((s) => contactLeaks(s.body, contacts, s.url));
      assert.deepEqual(leaks, []);
    });
  });
}
