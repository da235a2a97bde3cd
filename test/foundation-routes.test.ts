import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction, smallSeries } from './support/fixtures.js';
import { get } from './support/http.js';

for (const dialect of DIALECTS) {
  describe(`first routes [${dialect}]`, () => {
    let env: TestEnv;
    let single: string;
    let series: string;

    before(async () => {
      env = await createEnv(dialect);
      await env.import(smallProduction('film'));
      await env.import(smallSeries('show'));
      single = await env.mint({ production: 'film' });
      series = await env.mint({ production: 'show' });
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
