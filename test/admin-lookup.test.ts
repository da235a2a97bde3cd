import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { get } from './support/http.js';
import { Factory } from './support/factory.js';
import { importRoundTrip, type Refs } from './support/round-trip.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const A = '/api/v1/admin';

for (const dialect of DIALECTS) {
  describe(`admin lookups: organisations and grant targets by number or name [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let admin: string;
    let plain: string;

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      await importRoundTrip(env, 'other');
      admin = await env.mint({ production: 'film', scopes: ['admin'] });
      plain = await env.mint({ production: 'film', scopes: ['read', 'write'] });
    });
    after(() => env.close());

    const find = async (query: string) => {
      const r = await get(env.app, `${A}/grant-targets?${query}`, admin);
      assert.equal(r.status, 200, r.text);
      return r.body as any[];
    };

    it('lists the production’s organisations (not another production’s) with their live engagements', async () => {
      const r = await get(env.app, `${A}/organisations`, admin);
      assert.equal(r.status, 200);
      assert.equal(r.body.length, 6);
      const pix = r.body.find((o: any) => o.ref === 'org-pix');
      assert.deepEqual(pix, { id: refs['org-pix'], ref: 'org-pix', name: 'Pixelworks Ltd', engagements: 1 });
      assert.deepEqual(
        r.body.map((o: any) => o.name),
        [...r.body.map((o: any) => o.name)].sort(),
      );
    });

    it('finds scenes by the start of their number or words of the slugline, in script order; never omitted-and-retired ones of another production', async () => {
      assert.deepEqual(
        (await find('kind=scene&q=1')).map((s) => [s.id, s.number, s.label]),
        [[refs.sc1, '1', 'INT. WARD - NIGHT']],
      );
      assert.deepEqual(
        (await find('kind=scene&q=vault')).map((s) => s.id),
        [refs.sc3],
      );
      assert.deepEqual(
        (await find('kind=scene')).map((s) => s.id),
        [refs.sc1, refs.sc2, refs.sc3],
      );
      assert.deepEqual(await find('kind=scene&q=%25'), [], 'a % is a literal, not a wildcard');
      assert.deepEqual(await find('kind=scene&q=_'), [], 'an _ is a literal, not a wildcard');
      assert.equal((await find('kind=scene&limit=2')).length, 2);
    });

    it('finds characters and deliveries by name, case-insensitively', async () => {
      assert.deepEqual(
        (await find('kind=character&q=MAR')).map((c) => [c.id, c.label]),
        [[refs['ch-mara'], 'Mara']],
      );
      const plates = await find('kind=delivery&q=cape');
      assert.deepEqual(
        plates.map((d) => d.id),
        [refs['dl-other']],
      );
      assert.equal(plates[0].kind, 'delivery');
    });

    it('never offers an internal delivery (department to department): it is never granted to a vendor', async () => {
      const film = await env.handle.db
        .selectFrom('productions')
        .where('code', '=', 'film')
        .select('id')
        .executeTakeFirstOrThrow();
      const internal = await new Factory(env.handle.db).delivery(film.id, {
        title: 'Cape scans, art to vfx',
        kind: 'internal',
      });
      assert.deepEqual(
        (await find('kind=delivery&q=cape')).map((d) => d.id),
        [refs['dl-other']],
      );
      assert.ok(!(await find('kind=delivery&limit=50')).some((d) => d.id === internal.id));
    });

    it('refuses a bad kind or limit (422), a key without admin (403)', async () => {
      for (const q of ['kind=asset', '', 'kind=scene&limit=51', 'kind=scene&limit=0', 'kind=scene&x=1']) {
        const r = await get(env.app, `${A}/grant-targets?${q}`, admin);
        assert.equal(r.status, 422, q);
        assert.equal(r.body.code, 'invalid_field');
      }
      assert.equal((await get(env.app, `${A}/grant-targets?kind=scene`, plain)).status, 403);
      assert.equal((await get(env.app, `${A}/organisations`, plain)).status, 403);
    });
  });
}
