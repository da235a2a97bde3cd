import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../src/config.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, get } from './support/http.js';

/*
 * Assembled answers are kept by production revision (src/http/answer-cache.ts): a repeat
 * request is served as assembled, and any committed write is seen on the very next request.
 */

for (const dialect of DIALECTS) {
  describe(`answers kept by production revision [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let vendor: string;
    const queriesSince = (start: number) =>
      env.queries.sql.slice(start).filter((q) => !/"last_used_at"/.test(q)).length;

    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      const film = await make.production({ code: 'film' });
      const ward = await make.asset(film.id, { kind: 'location', label: 'Ward' });
      await make.scene(film.id, { uses: [ward.id] });
      await make.scene(film.id, { status: 'omitted' });
      // a vendor holding a submit grant on one turnover and the money grant, with an order of its own
      const pix = await make.organisation(film.id, { name: 'Pixelworks Ltd' });
      const engagement = await make.engagement(film.id, pix.id);
      const plates = await make.delivery(film.id, { title: 'Plates, reel 1', status: 'ready' });
      await make.grant(film.id, engagement.id, {
        kind: 'delivery',
        delivery_id: plates.id,
        access: 'submit',
      });
      await make.grant(film.id, engagement.id, { kind: 'own_po' });
      // a vendor sees only its orders that are bound to a department
      const vfx = await make.department(film.id, { slug: 'vfx' });
      await make.purchaseOrder(film.id, { vendor_organisation_id: pix.id, department_id: vfx.id });
      token = await make.key(film.id);
      vendor = await make.key(film.id, { engagementId: engagement.id, scopes: ['read', 'read:money'] });
    });
    after(() => env.close());

    it('a repeat GET /scenes is the key lookup alone, byte for byte the same answer', async () => {
      const first = await get(env.app, '/api/v1/scenes', token);
      assert.equal(first.status, 200);
      const start = env.queries.sql.length;
      const again = await get(env.app, '/api/v1/scenes', token);
      assert.equal(again.status, 200);
      assert.equal(again.text, first.text);
      assert.match(String(again.headers['content-type']), /^application\/json/);
      assert.equal(queriesSince(start), 1);
    });

    it('GET /production counts an asset created through the API on the very next request', async () => {
      const before = (await get(env.app, '/api/v1/production', token)).body.stats.nodes;
      assert.equal((await get(env.app, '/api/v1/production', token)).body.stats.nodes, before);
      const created = await call(env.app, 'POST', '/api/v1/assets', { token, body: { label: 'Flare gun' } });
      assert.equal(created.status, 201);
      assert.equal((await get(env.app, '/api/v1/production', token)).body.stats.nodes, before + 1);
    });

    it('a kept turnover list or money answer lapses with its grant, though nothing bumped the revision', async () => {
      // the turnover grant lapses a moment from now, the money grant a moment later: set behind
      // the API's back, so the production's revision is moved as a write through it would move it
      const lapses = { delivery: Date.now() + 3000, own_po: Date.now() + 5000 };
      for (const kind of ['delivery', 'own_po'] as const)
        await env.handle.db
          .updateTable('grants')
          .set({ expires_at: new Date(lapses[kind]).toISOString() })
          .where('kind', '=', kind)
          .execute();
      await env.handle.db
        .updateTable('productions')
        .set((eb) => ({ revision: eb('revision', '+', 1) }))
        .execute();
      const turnovers = async () => (await get(env.app, '/api/v1/turnovers', vendor)).body;
      const money = async () => (await get(env.app, '/api/v1/purchase-orders', vendor)).body;
      const after = (at: number) => new Promise((r) => setTimeout(r, at - Date.now() + 50));
      assert.equal((await turnovers()).length, 1);
      assert.equal((await turnovers()).length, 1, 'kept');
      assert.ok((await money()).purchase_orders.length > 0);
      assert.ok((await money()).purchase_orders.length > 0, 'kept');
      // an expiry is time passing, not a write: no revision changes
      await after(lapses.delivery);
      assert.deepEqual(await turnovers(), []);
      assert.ok((await money()).purchase_orders.length > 0, 'the money grant has not lapsed yet');
      await after(lapses.own_po);
      assert.deepEqual(await money(), { purchase_orders: [], line: [], week_of: null });
    });

    it('a commit drops the production’s kept answers at once, before anyone asks again', async () => {
      assert.equal((await get(env.app, '/api/v1/scenes', token)).status, 200);
      assert.ok(env.app.answers.entries > 0);
      const created = await call(env.app, 'POST', '/api/v1/assets', { token, body: { label: 'Torch' } });
      assert.equal(created.status, 201);
      assert.equal(env.app.answers.entries, 0);
    });

    it('a refused write changes nothing and keeps the answer', async () => {
      const before = await get(env.app, '/api/v1/production', token);
      const refused = await call(env.app, 'POST', '/api/v1/assets', { token, body: { label: 42 } });
      assert.equal(refused.status, 422);
      const start = env.queries.sql.length;
      assert.equal((await get(env.app, '/api/v1/production', token)).text, before.text);
      assert.equal(queriesSince(start), 1);
    });

    it('twenty requests at once for an answer not yet kept assemble it once', async () => {
      // one miss alone, to learn what assembling GET /scenes costs
      await call(env.app, 'POST', '/api/v1/assets', { token, body: { label: 'Lamp' } });
      let start = env.queries.sql.length;
      const alone = await get(env.app, '/api/v1/scenes', token);
      const assembly = queriesSince(start) - 1;
      assert.ok(assembly >= 1);
      await call(env.app, 'POST', '/api/v1/assets', { token, body: { label: 'Lamp 2' } });
      start = env.queries.sql.length;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => get(env.app, '/api/v1/scenes', token)),
      );
      assert.ok(answers.every((a) => a.status === 200 && a.text === alone.text));
      // twenty key lookups, one assembly
      assert.equal(queriesSince(start), 20 + assembly);
    });
  });

  describe(`PRODGRAPH_ANSWER_CACHE_MB=0 keeps nothing [${dialect}]`, () => {
    let env: TestEnv;
    let film: number;
    before(async () => {
      env = await createEnv(dialect, { PRODGRAPH_ANSWER_CACHE_MB: '0' });
      const make = new Factory(env.handle.db);
      film = (await make.production({ code: 'film' })).id;
      await make.scene(film);
      await make.scene(film);
    });
    after(() => env.close());

    it('every request assembles its answer', async () => {
      const token = await new Factory(env.handle.db).key(film);
      const first = await get(env.app, '/api/v1/scenes', token);
      const start = env.queries.sql.length;
      const again = await get(env.app, '/api/v1/scenes', token);
      assert.equal(again.text, first.text);
      assert.ok(env.queries.sql.slice(start).length > 1);
    });
  });
}

describe('PRODGRAPH_ANSWER_CACHE_MB', () => {
  it('is a whole number of megabytes, 64 by default, 0 for none', () => {
    assert.equal(loadConfig({}, {}).answerCacheBytes, 64 * 1024 * 1024);
    assert.equal(loadConfig({}, { PRODGRAPH_ANSWER_CACHE_MB: '0' }).answerCacheBytes, 0);
    assert.equal(loadConfig({}, { PRODGRAPH_ANSWER_CACHE_MB: '16' }).answerCacheBytes, 16 * 1024 * 1024);
    for (const bad of ['lots', '-1', '1.5', '999999']) {
      assert.throws(() => loadConfig({}, { PRODGRAPH_ANSWER_CACHE_MB: bad }), ConfigError);
    }
  });
});
