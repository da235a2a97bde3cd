import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { prodgraphHere } from './support/cli.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { activitySince, changesSince, cliEnvOf, mark, nothingSince } from './support/write-trail.js';

const A = '/api/v1/admin';

for (const dialect of DIALECTS) {
  describe(`engaging a new vendor: organisations, and no grant on an internal delivery [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let admin: string;
    before(async () => {
      env = await createEnv(dialect);
      refs = (await env.import(smallProduction('orgs'))).refs;
      await env.import(smallProduction('other'));
      admin = await env.mint({ production: 'orgs', scopes: ['admin'], label: 'Coordinator desk' });
    });
    after(() => env.close());

    const post = (url: string, body: unknown, headers: Record<string, string> = {}, token = admin) =>
      call(env.app, 'POST', `${A}${url}`, { token, body, headers });

    it('adds an organisation (201), lists it, and engages it at once', async () => {
      const m = await mark(env);
      const made = await post('/organisations', { name: '  Brand New VFX Co.  ' });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual(made.body, {
        id: made.body.id,
        ref: 'org-brand-new-vfx-co',
        name: 'Brand New VFX Co.',
        engagements: 0,
      });
      assert.deepEqual(await changesSince(env, m), [`organisation:${made.body.id}:created`]);
      assert.deepEqual(await activitySince(env, m), [
        'added: organisation "Brand New VFX Co." (org-brand-new-vfx-co)',
      ]);
      const listed = (await get(env.app, `${A}/organisations`, admin)).body;
      assert.deepEqual(
        listed.find((o: { id: number }) => o.id === made.body.id),
        made.body,
      );

      const engaged = await post('/engagements', { ref: 'eng-brand', organisation_id: made.body.id });
      assert.equal(engaged.status, 201, engaged.text);
      assert.equal(engaged.body.organisation.name, 'Brand New VFX Co.');
      const after = (await get(env.app, `${A}/organisations`, admin)).body;
      assert.equal(after.find((o: { id: number }) => o.id === made.body.id).engagements, 1);
    });

    it('keeps a given ref, and makes a free one from the name when the first is taken', async () => {
      const given = await post('/organisations', { name: 'Lumen Post', ref: 'org-lumen' });
      assert.equal(given.status, 201, given.text);
      assert.equal(given.body.ref, 'org-lumen');
      // "org-pix" names Pixelworks in the document: the ref made from "Pix" takes the next free one
      const pix = await post('/organisations', { name: 'Pix' });
      assert.equal(pix.status, 201, pix.text);
      assert.equal(pix.body.ref, 'org-pix-2');
    });

    it('refuses the same name (any case, trimmed) or a taken ref with 409, writing nothing', async () => {
      for (const [body, pattern] of [
        [
          { name: 'pixelworks ltd' },
          /^name: organisation "Pixelworks Ltd" \(id \d+, ref org-pix\) already exists/,
        ],
        [{ name: ' PIXELWORKS LTD ', ref: 'org-fresh' }, /already exists/],
        [
          { name: 'Fresh Name', ref: 'org-pix' },
          /^ref: "org-pix" already names an organisation in this production$/,
        ],
        [{ name: 'Fresh Name', ref: 'sc1' }, /^ref: "sc1" already names a scene or asset/],
      ] as const) {
        const m = await mark(env);
        const r = await post('/organisations', body);
        assert.equal(r.status, 409, JSON.stringify(body));
        assert.equal(r.body.code, 'conflict');
        assert.match(r.body.detail, pattern);
        assert.ok(await nothingSince(env, m), JSON.stringify(body));
      }
      // another production's names are its own
      const otherAdmin = await env.mint({ production: 'other', scopes: ['admin'] });
      const there = await post('/organisations', { name: 'Brand New VFX Co.' }, {}, otherAdmin);
      assert.equal(there.status, 201, there.text);
    });

    it('refuses a blank or malformed name or ref (422) and any key without the admin scope', async () => {
      for (const [body, field] of [
        [{ name: '   ' }, 'name'],
        [{ name: '' }, 'name'],
        [{ name: 'Tab\u0007Co' }, 'name'],
        [{ name: 'Ok', ref: 'bad ref' }, 'ref'],
        [{ name: 'Ok', extra: 1 }, 'extra'],
        [{}, 'name'],
      ] as const) {
        const m = await mark(env);
        const r = await post('/organisations', body);
        assert.equal(r.status, 422, JSON.stringify(body));
        assert.equal(r.body.field, field, JSON.stringify(r.body));
        assert.ok(await nothingSince(env, m));
      }
      const plain = await env.mint({ production: 'orgs', scopes: ['read', 'write'] });
      const vendor = await env.mint({ production: 'orgs', engagement: 'eng-pix', scopes: ['read'] });
      assert.equal((await call(env.app, 'POST', `${A}/organisations`, { body: { name: 'X' } })).status, 401);
      assert.equal((await post('/organisations', { name: 'X' }, {}, plain)).body.code, 'scope_missing');
      assert.equal((await post('/organisations', { name: 'X' }, {}, vendor)).status, 403);
    });

    it('replays an Idempotency-Key: the same answer, nothing written twice; another body is 422', async () => {
      const headers = { 'idempotency-key': 'org-once' };
      const first = await post('/organisations', { name: 'Once Only Ltd' }, headers);
      assert.equal(first.status, 201);
      const m = await mark(env);
      const again = await post('/organisations', { name: 'Once Only Ltd' }, headers);
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, first.body);
      assert.ok(await nothingSince(env, m));
      const other = await post('/organisations', { name: 'Twice Ltd' }, headers);
      assert.equal(other.status, 422);
      assert.equal(other.body.code, 'idempotency_key_reused');
    });

    it('refuses a grant on an internal delivery (422 naming delivery_id), over the API and the CLI', async () => {
      const m = await mark(env);
      const r = await post('/grants', {
        engagement_id: refs['eng-pix'],
        kind: 'delivery',
        delivery_id: refs['dl-int'],
        access: 'read',
      });
      assert.equal(r.status, 422, r.text);
      assert.equal(r.body.field, 'delivery_id');
      assert.match(
        r.body.detail,
        /"Costume refs to VFX" is an internal delivery \(department to department\)/,
      );
      assert.ok(await nothingSince(env, m));
      const cli = await prodgraphHere(
        [
          'grants',
          'add',
          '--production',
          'orgs',
          '--engagement',
          'eng-pix',
          '--delivery',
          'dl-int',
          '--access',
          'read',
        ],
        cliEnvOf(env),
      );
      assert.equal(cli.code, 1);
      assert.match(cli.stderr, /^prodgraph: --delivery: "Costume refs to VFX" is an internal delivery/);
      assert.ok(await nothingSince(env, m));
      // the grant-target search offers only external deliveries
      const targets = (await get(env.app, `${A}/grant-targets?kind=delivery`, admin)).body;
      assert.deepEqual(
        targets.map((t: { id: number }) => t.id),
        [refs['dl-plates']],
      );
      // an external one is granted as before
      const ok = await post('/grants', {
        engagement_id: refs['eng-hal'],
        kind: 'delivery',
        delivery_id: refs['dl-plates'],
        access: 'read',
      });
      assert.equal(ok.status, 201, ok.text);
    });

    it('prodgraph organisations add and list', async () => {
      const cli = cliEnvOf(env);
      const added = await prodgraphHere(
        ['organisations', 'add', '--production', 'orgs', '--name', 'Night Shift Roto', '--json'],
        cli,
      );
      assert.equal(added.code, 0, added.stderr);
      const org = JSON.parse(added.stdout);
      assert.equal(org.ref, 'org-night-shift-roto');
      const plain = await prodgraphHere(
        ['organisations', 'add', '--production', 'orgs', '--name', 'Dawn Comp', '--ref', 'org-dawn'],
        cli,
      );
      assert.equal(plain.stdout, `added organisation "Dawn Comp" (ref org-dawn, id ${org.id + 1})\n`);
      const dup = await prodgraphHere(
        ['organisations', 'add', '--production', 'orgs', '--name', 'night shift roto'],
        cli,
      );
      assert.equal(dup.code, 1);
      assert.match(dup.stderr, /^prodgraph: --name: organisation "Night Shift Roto" .* already exists/);
      const bad = await prodgraphHere(
        ['organisations', 'add', '--production', 'orgs', '--name', 'Z', '--ref', 'no spaces'],
        cli,
      );
      assert.match(bad.stderr, /^prodgraph: --ref: must be letters/);
      const list = await prodgraphHere(['organisations', 'list', '--production', 'orgs', '--json'], cli);
      const names = JSON.parse(list.stdout).map((o: { name: string }) => o.name);
      assert.ok(names.includes('Night Shift Roto') && names.includes('Dawn Comp'));
      const table = await prodgraphHere(['organisations', 'list', '--production', 'orgs'], cli);
      assert.match(table.stdout, /^ID\s+REF\s+NAME\s+ENGAGEMENTS\n/);
      assert.match(table.stdout, /org-dawn\s+Dawn Comp\s+0/);
      // the CLI's change is recorded like the API's
      const m = await mark(env);
      await prodgraphHere(['organisations', 'add', '--production', 'orgs', '--name', 'Late Co'], cli);
      const [change] = await changesSince(env, m);
      assert.match(change!, /^organisation:\d+:created$/);
    });
  });
}
