import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { get } from './support/http.js';

for (const dialect of DIALECTS) {
  describe(`first routes [${dialect}]`, () => {
    let env: TestEnv;
    let single: string;
    let series: string;

    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      const film = await make.production({ code: 'film' });
      const costume = await make.department(film.id, {
        slug: 'costume',
        name: 'Costume',
        phases: JSON.stringify(['prep', 'production']),
        registry: JSON.stringify({ rails: 3 }),
      });
      const vfx = await make.department(film.id, {
        slug: 'vfx',
        name: 'Visual Effects',
        privacy: 'restricted',
        unveiled: 0,
      });
      const contacts = (n: number) => ({ email: `p${n}@example.test`, phone: `+44 20 7946 000${n}` });
      await make.person(film.id, {
        name: 'Ana Ruiz',
        role: 'Costume Designer',
        department_id: costume.id,
        is_hod: 1,
        ...contacts(1),
      });
      await make.person(film.id, {
        name: 'Ben Okafor',
        role: 'VFX Supervisor',
        department_id: vfx.id,
        is_hod: 1,
      });
      await make.person(film.id, {
        name: 'Cy Marsh',
        role: 'Costume Assistant',
        department_id: costume.id,
        ...contacts(3),
      });
      await make.asset(film.id, { kind: 'character', label: 'Mara', department_id: costume.id });
      await make.asset(film.id, { kind: 'costume', label: 'Mara coat', department_id: costume.id });
      const ward = await make.asset(film.id, { kind: 'location', label: 'Ward', department_id: vfx.id });
      await make.scene(film.id, { uses: [ward.id] });
      await make.scene(film.id, { status: 'omitted', uses: [ward.id] });
      // counted: one pending approval of two, one delivery in flight of two
      await make.approval(film.id, { status: 'pending' });
      await make.approval(film.id, { status: 'approved', mode: 'decision' });
      await make.delivery(film.id, { status: 'ready' });
      await make.delivery(film.id, { status: 'draft', kind: 'internal' });
      const show = await make.production({ code: 'show', format: 'episodic', season_number: 1 });
      await make.department(show.id, { slug: 'costume', name: 'Costume' });
      single = await make.key(film.id);
      series = await make.key(show.id);
    });
    after(() => env.close());

    it('GET /healthz answers ok without a key', async () => {
      const r = await get(env.app, '/healthz');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { status: 'ok' });
    });

    it('GET /production answers exactly the contract fields, stats computed from the graph', async () => {
      const r = await get(env.app, '/api/v1/production', single);
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body).sort(), [
        'accent',
        'format',
        'id',
        'logline',
        'phase',
        'stats',
        'status',
        'title',
      ]);
      assert.equal(r.body.format, 'single');
      assert.equal('season_number' in r.body, false, 'a single production has no season_number key');
      assert.deepEqual(r.body.stats, {
        departments: 2,
        open_approvals: 1,
        deliveries_in_flight: 1,
        scenes: 2,
        nodes: 5,
      });
    });

    it('GET /production on an episodic production carries season_number', async () => {
      const r = await get(env.app, '/api/v1/production', series);
      assert.equal(r.status, 200);
      assert.equal(r.body.format, 'episodic');
      assert.equal(r.body.season_number, 1);
      assert.equal(r.body.title, 'Test show');
    });

    it('GET /departments lists rows in document order with every field typed', async () => {
      const r = await get(env.app, '/api/v1/departments', single);
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((d: { slug: string }) => d.slug),
        ['costume', 'vfx'],
      );
      const [costume, vfx] = r.body;
      assert.deepEqual(Object.keys(costume).sort(), [
        'cluster',
        'id',
        'key_roles',
        'mission',
        'name',
        'phases',
        'privacy',
        'slug',
        'unveiled',
        'updated_at',
      ]);
      assert.deepEqual(costume.phases, ['prep', 'production']);
      assert.equal(costume.unveiled, true);
      assert.equal(vfx.privacy, 'restricted');
      assert.equal(vfx.unveiled, false);
    });

    it('GET /departments/{slug} shows people (heads first, no contact details) and the asset count', async () => {
      const r = await get(env.app, '/api/v1/departments/costume', single);
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body).sort(), [
        'assets',
        'cluster',
        'id',
        'name',
        'people',
        'registry',
        'slug',
      ]);
      assert.deepEqual(r.body.registry, { rails: 3 });
      assert.equal(r.body.assets, 2);
      assert.deepEqual(r.body.people, [
        { id: r.body.people[0].id, name: 'Ana Ruiz', role: 'Costume Designer', is_hod: true },
        { id: r.body.people[1].id, name: 'Cy Marsh', role: 'Costume Assistant', is_hod: false },
      ]);
      assert.doesNotMatch(r.text, /example\.test|7946/);
    });

    it("GET /departments/{slug} answers 404 for an unknown slug and for another production's department alike", async () => {
      const unknown = await get(env.app, '/api/v1/departments/nope', single);
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.body, { detail: 'department not found', code: 'not_found' });
      // both productions have a costume department; each key sees only its own
      const own = await get(env.app, '/api/v1/departments/costume', series);
      const other = await get(env.app, '/api/v1/departments/costume', single);
      assert.notEqual(own.body.id, other.body.id);
    });

    it('an unknown route is a 404 with a detail body', async () => {
      const r = await get(env.app, '/api/v1/nothing-here', single);
      assert.equal(r.status, 404);
      assert.match(r.body.detail, /no route/);
      assert.match(String(r.headers['content-type']), /application\/json/);
    });
  });
}
