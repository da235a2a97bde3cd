import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { get } from './support/http.js';

for (const dialect of DIALECTS) {
  describe(`purchase orders [${dialect}]`, () => {
    let env: TestEnv;
    const refs: Record<string, number> = {};

    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      const film = (await make.production({ code: 'film' })).id;
      refs.costume = (await make.department(film, { slug: 'costume', accounts: ['2300'] })).id;
      refs.vfx = (await make.department(film, { slug: 'vfx', accounts: ['4200'] })).id;
      const org = async (name: string) => (await make.organisation(film, { name })).id;
      const [pix, hal, rev] = [
        await org('Pixelworks Ltd'),
        await org('Halide FX'),
        await org('Revoked Pictures'),
      ];
      // eng-pix sits in vfx, eng-hal in costume; both hold the money grant
      for (const [ref, organisation, department] of [
        ['eng-pix', pix, refs.vfx],
        ['eng-hal', hal, refs.costume],
      ] as const) {
        const e = await make.engagement(film, organisation, { ref, departments: [department] });
        await make.grant(film, e.id, { kind: 'own_po' });
      }
      const po = async (ref: string, values: Parameters<typeof make.purchaseOrder>[1]) =>
        (refs[ref] = (await make.purchaseOrder(film, values)).id);
      await po('po1', {
        vendor_organisation_id: pix,
        department_id: refs.vfx,
        account: '4200',
        description: 'Plate cleanup',
        amount: 12500.5,
        status: 'open',
        date: '2026-03-02',
      });
      await po('po2', {
        vendor_organisation_id: pix,
        department_id: null,
        account: '9000',
        description: 'Insurance share',
        amount: 900,
        date: '2026-03-02',
      });
      await po('po3', {
        vendor_organisation_id: hal,
        department_id: refs.costume,
        account: '2300',
        description: 'Cape build',
        amount: 4000,
        status: 'partial',
        date: '2026-03-03',
      });
      await po('po4', {
        vendor_organisation_id: pix,
        department_id: refs.costume,
        account: '2300',
        description: 'Coat weathering',
        amount: 750,
        status: 'closed',
        date: '2026-03-01',
      });
      await po('po5', {
        vendor_organisation_id: rev,
        department_id: refs.vfx,
        account: '4200',
        description: 'Roto',
        amount: 300,
        date: '2026-03-01',
      });
      await make.costReport(film, {
        week_of: '2026-02-23',
        active: 0,
        lines: [{ account: '4200', description: 'VFX (old)', budget: 1, actual: 1, committed: 1 }],
      });
      await make.costReport(film, {
        week_of: '2026-03-02',
        active: 1,
        lines: [
          { account: '2300', description: 'Costume', budget: 80000, actual: 12000, committed: 4750 },
          { account: '4200', description: 'VFX', budget: 250000.25, actual: 41000, committed: 12500 },
          { account: '9000', description: 'Insurance', budget: 5000 },
        ],
      });
    });
    after(() => env.close());

    it("a vendor gets only its own department-bound rows and its departments' cost lines, as numbers", async () => {
      const pix = await env.mint({ production: 'film', scopes: ['read:money'], engagement: 'eng-pix' });
      const r = await get(env.app, '/api/v1/purchase-orders', pix);
      assert.equal(r.status, 200);
      for (const o of r.body.purchase_orders) {
        assert.match(o.updated_at, /Z$/);
        delete o.updated_at;
      }
      assert.deepEqual(r.body, {
        purchase_orders: [
          {
            id: refs.po4,
            department_id: refs.costume,
            account: '2300',
            vendor: 'Pixelworks Ltd',
            description: 'Coat weathering',
            amount: 750,
            status: 'closed',
            date: '2026-03-01',
          },
          {
            id: refs.po1,
            department_id: refs.vfx,
            account: '4200',
            vendor: 'Pixelworks Ltd',
            description: 'Plate cleanup',
            amount: 12500.5,
            status: 'open',
            date: '2026-03-02',
          },
        ],
        // eng-pix's departments are [vfx], whose account is 4200; the inactive week's line is not shown
        line: [{ account: '4200', description: 'VFX', budget: 250000.25, actual: 41000, committed: 12500 }],
        week_of: '2026-03-02',
      });
      // po2 (no department) and other vendors' rows (po3, po5) never appear
      const ids = r.body.purchase_orders.map((o) => o.id);
      for (const hidden of [refs.po2, refs.po3, refs.po5]) {
        assert.ok(hidden !== undefined && !ids.includes(hidden));
      }
    });

    it("another vendor sees its own rows and its own departments' lines", async () => {
      const hal = await env.mint({ production: 'film', scopes: ['read:money'], engagement: 'eng-hal' });
      const r = await get(env.app, '/api/v1/purchase-orders', hal);
      assert.deepEqual(
        r.body.purchase_orders.map((o: { id: number }) => o.id),
        [refs.po3],
      );
      assert.deepEqual(
        r.body.line.map((l: { account: string }) => l.account),
        ['2300'],
      );
    });

    it('without an active cost report: rows, no lines, week_of null', async () => {
      await env.handle.db.updateTable('cost_reports').set({ active: 0 }).execute();
      // written behind the API's back: bump the revision as every write through it does
      await env.handle.db
        .updateTable('productions')
        .set((eb) => ({ revision: eb('revision', '+', 1) }))
        .execute();
      const pix = await env.mint({ production: 'film', scopes: ['read:money'], engagement: 'eng-pix' });
      const r = await get(env.app, '/api/v1/purchase-orders', pix);
      assert.equal(r.body.purchase_orders.length, 2);
      assert.deepEqual(r.body.line, []);
      assert.equal(r.body.week_of, null);
    });

    it('read alone is not enough: 403 naming read:money', async () => {
      const key = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-pix' });
      const r = await get(env.app, '/api/v1/purchase-orders', key);
      assert.equal(r.status, 403);
      assert.match(r.body.detail, /read:money/);
    });
  });
}
