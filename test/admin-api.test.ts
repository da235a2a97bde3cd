import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';

const A = '/api/v1/admin';

for (const dialect of DIALECTS) {
  describe(`admin API: engagements, grants, keys [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let admin: string;
    let plain: string;
    let vendor: string;
    let foreign: { engagement: number; grant: number; key: number };
    before(async () => {
      env = await createEnv(dialect);
      refs = (await env.import(smallProduction('adm'))).refs;
      const other = await env.import(smallProduction('other'));
      admin = await env.mint({ production: 'adm', scopes: ['admin'] });
      plain = await env.mint({
        production: 'adm',
        scopes: ['read', 'write', 'submit:turnover', 'read:money'],
      });
      vendor = await env.mint({ production: 'adm', engagement: 'eng-pix', scopes: ['read'] });
      const otherAdmin = await env.mint({ production: 'other', scopes: ['admin'] });
      const grants = (await get(env.app, `${A}/grants`, otherAdmin)).body;
      const keys = (await get(env.app, `${A}/keys`, otherAdmin)).body;
      foreign = { engagement: other.refs['eng-pix']!, grant: grants[0].id, key: keys[0].id };
    });
    after(() => env.close());

    const post = (url: string, body: unknown, token = admin, headers: Record<string, string> = {}) =>
      call(env.app, 'POST', `${A}${url}`, { token, body, headers });

    it('refuses without a key (401), without the admin scope (403) and for a vendor key (403)', async () => {
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/engagements'],
        ['GET', `/engagements/${refs['eng-pix']}`],
        ['POST', '/engagements', { ref: 'e-x', organisation_id: refs['org-pix'] }],
        ['POST', `/engagements/${refs['eng-hal']}/archive`],
        ['GET', '/grants'],
        ['POST', '/grants', { engagement_id: refs['eng-pix'], kind: 'own_po' }],
        ['POST', '/grants/1/revoke'],
        ['GET', '/keys'],
        ['POST', '/keys', { label: 'x' }],
        ['POST', '/keys/1/revoke'],
      ];
      for (const [method, url, body] of routes) {
        const none = await call(env.app, method as 'GET', `${A}${url}`, { body });
        assert.equal(none.status, 401, `${method} ${url}`);
        assert.equal(none.headers['www-authenticate'], 'Bearer realm="prodgraph"');
        const scoped = await call(env.app, method as 'GET', `${A}${url}`, { token: plain, body });
        assert.equal(scoped.status, 403, `${method} ${url} without admin`);
        assert.match(scoped.body.detail, /lacks the "admin" scope/);
        const bound = await call(env.app, method as 'GET', `${A}${url}`, { token: vendor, body });
        assert.equal(bound.status, 403, `${method} ${url} for a vendor key`);
      }
      assert.equal(
        (await env.handle.db.selectFrom('engagements').where('ref', '=', 'e-x').select('id').execute())
          .length,
        0,
      );
    });

    it('lists engagements with their organisation, departments, grants and keys', async () => {
      const r = await get(env.app, `${A}/engagements`, admin);
      assert.equal(r.status, 200);
      const pix = r.body.find((e: { ref: string }) => e.ref === 'eng-pix');
      assert.equal(pix.organisation.name, 'Pixelworks Ltd');
      assert.equal(pix.source, 'document');
      assert.equal(pix.keys, 1);
      assert.ok(pix.live_grants > 0);
      assert.equal(pix.archived_at, null);
    });

    it('reads one engagement as the list shows it, and the keys of one engagement', async () => {
      const list = (await get(env.app, `${A}/engagements?include_archived=true`, admin)).body as Array<{
        id: number;
      }>;
      for (const e of list) {
        const one = await get(env.app, `${A}/engagements/${e.id}`, admin);
        assert.equal(one.status, 200, one.text);
        assert.deepEqual(one.body, e);
      }
      for (const id of [999999, foreign.engagement]) {
        const r = await get(env.app, `${A}/engagements/${id}`, admin);
        assert.equal(r.status, 404);
        assert.match(r.body.detail, /not found$/);
      }
      assert.equal((await get(env.app, `${A}/engagements/abc`, admin)).status, 422);

      const all = (await get(env.app, `${A}/keys`, admin)).body as Array<{ engagement_id: number | null }>;
      const pix = await get(env.app, `${A}/keys?engagement_id=${refs['eng-pix']}`, admin);
      assert.equal(pix.status, 200);
      assert.ok(pix.body.length > 0);
      assert.deepEqual(
        pix.body,
        all.filter((k) => k.engagement_id === refs['eng-pix']),
      );
      for (const id of [999999, foreign.engagement]) {
        const r = await get(env.app, `${A}/keys?engagement_id=${id}`, admin);
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, [], 'another production’s engagement has no key here');
      }
      for (const url of ['/keys?engagement_id=abc', '/keys?engagement_id=0', '/keys?owner=1']) {
        const r = await get(env.app, `${A}${url}`, admin);
        assert.equal(r.status, 422, url);
        assert.ok(typeof r.body.detail === 'string');
      }
    });

    it('engages a vendor, grants it a scene the very next request reaches, and revokes it at once', async () => {
      const made = await post('/engagements', {
        ref: 'eng-new',
        organisation_id: refs['org-hal'],
        departments: ['vfx'],
      });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual(
        {
          ref: made.body.ref,
          source: made.body.source,
          departments: made.body.departments,
          keys: made.body.keys,
        },
        { ref: 'eng-new', source: 'admin', departments: ['vfx'], keys: 0 },
      );
      const minted = await post('/keys', {
        label: 'new vendor',
        engagement_id: made.body.id,
        scopes: ['read'],
      });
      assert.equal(minted.status, 201);
      const key = minted.body.token as string;
      const scene = `/api/v1/bundles/scene/${refs.sc1}`;
      assert.equal((await get(env.app, scene, key)).status, 404, 'nothing granted yet');
      const granted = await post('/grants', {
        engagement_id: made.body.id,
        kind: 'scene',
        node_id: refs.sc1,
      });
      assert.equal(granted.status, 201, granted.text);
      assert.equal(granted.body.live, true);
      assert.equal(granted.body.node_label, '1 INT. WARD - NIGHT');
      assert.equal(granted.body.episode_code, null, 'a feature film has no episodes');
      assert.equal((await get(env.app, scene, key)).status, 200, 'the next request reaches it');
      const revoked = await post(`/grants/${granted.body.id}/revoke`, undefined);
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.live, false);
      assert.ok(revoked.body.revoked_at);
      assert.equal((await get(env.app, scene, key)).status, 404, 'and the next request no longer does');
      const again = await post(`/grants/${granted.body.id}/revoke`, undefined);
      assert.equal(again.status, 200, 'revoking twice answers the grant unchanged');
      assert.equal(again.body.revoked_at, revoked.body.revoked_at);
      const feed = (await get(env.app, '/api/v1/activity?limit=5', plain)).body as Array<{
        verb: string;
        actor: string;
      }>;
      assert.deepEqual(
        feed.slice(0, 4).map((a) => a.verb),
        ['revoked', 'granted', 'minted', 'engaged'],
        'each change is in the activity feed, once',
      );
    });

    it('archives an engagement: its key reaches nothing from the next request on', async () => {
      const key = await env.mint({ production: 'adm', engagement: 'eng-hal', scopes: ['read'] });
      const granted = await post('/grants', {
        engagement_id: refs['eng-hal'],
        kind: 'scene',
        node_id: refs.sc1,
      });
      assert.equal(granted.status, 201);
      assert.equal((await get(env.app, `/api/v1/bundles/scene/${refs.sc1}`, key)).status, 200);
      const archived = await post(`/engagements/${refs['eng-hal']}/archive`, undefined);
      assert.equal(archived.status, 200);
      assert.ok(archived.body.archived_at);
      assert.equal((await get(env.app, `/api/v1/bundles/scene/${refs.sc1}`, key)).status, 404);
      const live = (await get(env.app, `${A}/engagements`, admin)).body as Array<{ ref: string }>;
      assert.ok(!live.some((e) => e.ref === 'eng-hal'), 'archived ones leave the default list');
      const all = (await get(env.app, `${A}/engagements?include_archived=true`, admin)).body as Array<{
        ref: string;
      }>;
      assert.ok(all.some((e) => e.ref === 'eng-hal'));
      const grant = await post('/grants', { engagement_id: refs['eng-hal'], kind: 'own_po' });
      assert.equal(grant.status, 422);
      assert.match(grant.body.detail, /^engagement_id: engagement "eng-hal" is archived/);
    });

    it('refuses bad engagements and grants with the field named, changing nothing', async () => {
      const cases: Array<[string, unknown, number, RegExp]> = [
        [
          '/engagements',
          { ref: 'sc1', organisation_id: refs['org-pix'] },
          409,
          /^ref: "sc1" already names a scene or asset/,
        ],
        [
          '/engagements',
          { ref: 'eng-y', organisation_id: 999999 },
          422,
          /^organisation_id: no organisation 999999/,
        ],
        [
          '/engagements',
          { ref: 'eng-y', organisation_id: refs['org-pix'], departments: ['nope'] },
          422,
          /^departments: no department "nope"/,
        ],
        ['/engagements', { ref: 'has space', organisation_id: refs['org-pix'] }, 422, /ref/],
        ['/engagements', { ref: 'eng-y', organisation_id: refs['org-pix'], colour: 'red' }, 422, /colour/],
        ['/engagements', { ref: 'eng-y', organisation_id: 'one' }, 422, /organisation_id/],
        [
          '/grants',
          { engagement_id: refs['eng-pix'], kind: 'scene' },
          422,
          /^node_id: is required on a scene grant/,
        ],
        [
          '/grants',
          { engagement_id: refs['eng-pix'], kind: 'scene', node_id: refs['ch-mara'] },
          422,
          /^node_id: no scene/,
        ],
        [
          '/grants',
          { engagement_id: refs['eng-pix'], kind: 'character', node_id: refs.sc1 },
          422,
          /^node_id: no character/,
        ],
        [
          '/grants',
          { engagement_id: refs['eng-pix'], kind: 'delivery', delivery_id: refs['dl-plates'] },
          422,
          /^access: is required/,
        ],
        [
          '/grants',
          { engagement_id: refs['eng-pix'], kind: 'own_po', node_id: refs.sc1 },
          422,
          /^node_id: an own_po grant names no node/,
        ],
        ['/grants', { engagement_id: 999999, kind: 'own_po' }, 422, /^engagement_id: no engagement 999999/],
        [
          '/grants',
          { engagement_id: foreign.engagement, kind: 'own_po' },
          422,
          /^engagement_id: no engagement/,
        ],
        [
          '/grants',
          { engagement_id: refs['eng-pix'], kind: 'own_po', expires_at: '2001-01-01T00:00:00Z' },
          422,
          /^expires_at: must be in the future/,
        ],
        ['/grants', { engagement_id: refs['eng-pix'], kind: 'root' }, 422, /kind/],
        [
          '/grants',
          { engagement_id: refs['eng-pix'], kind: 'scene', node_id: refs.sc1 },
          409,
          /already holds this grant live/,
        ],
        ['/keys', { label: '   ' }, 422, /^label: must not be blank/],
        [
          '/keys',
          { label: 'v', engagement_id: refs['eng-pix'], scopes: ['admin'] },
          422,
          /cannot hold the "admin" scope/,
        ],
        ['/keys', { label: 'v', scopes: ['root'] }, 422, /scopes/],
        ['/keys', { label: 'v', person_id: 999999 }, 422, /^person_id: no person 999999/],
      ];
      const count = async () => ({
        e: (await env.handle.db.selectFrom('engagements').select('id').execute()).length,
        g: (await env.handle.db.selectFrom('grants').select('id').execute()).length,
        k: (await env.handle.db.selectFrom('api_keys').select('id').execute()).length,
      });
      const was = await count();
      for (const [url, body, status, detail] of cases) {
        const r = await post(url, body);
        assert.equal(r.status, status, `${url} ${JSON.stringify(body)}: ${r.text}`);
        assert.match(r.body.detail, detail);
      }
      assert.deepEqual(await count(), was);
    });

    it('answers 404 for unknown and other productions’ engagements, grants and keys alike', async () => {
      for (const url of [
        `/engagements/999999/archive`,
        `/engagements/${foreign.engagement}/archive`,
        `/grants/999999/revoke`,
        `/grants/${foreign.grant}/revoke`,
        `/keys/999999/revoke`,
        `/keys/${foreign.key}/revoke`,
      ]) {
        const r = await post(url, undefined);
        assert.equal(r.status, 404, url);
        assert.match(r.body.detail, /not found$/);
      }
      assert.equal((await post('/keys/abc/revoke', undefined)).status, 422);
      for (const url of [
        '/engagements?include_archived=maybe',
        '/grants?engagement_id=abc',
        '/grants?include_inactive=2',
      ]) {
        const r = await get(env.app, `${A}${url}`, admin);
        assert.equal(r.status, 422, url);
        assert.ok(typeof r.body.detail === 'string');
      }
    });

    it('mints a key shown once (a replay answers it without the token) and revokes it at once', async () => {
      const first = await post('/keys', { label: 'farm', scopes: ['read'] }, admin, {
        'idempotency-key': 'farm-1',
      });
      assert.equal(first.status, 201);
      assert.match(first.body.token, /^pgk_/);
      assert.deepEqual(first.body.scopes, ['read']);
      assert.equal((await get(env.app, '/api/v1/production', first.body.token)).status, 200);
      const replay = await post('/keys', { label: 'farm', scopes: ['read'] }, admin, {
        'idempotency-key': 'farm-1',
      });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.id, first.body.id);
      assert.equal(replay.body.token, null, 'the token is never stored, so never replayed');
      const stored = await env.handle.db.selectFrom('idempotency_keys').select('response_body').execute();
      assert.ok(!stored.some((s) => s.response_body?.includes(first.body.token)));
      const listed = (await get(env.app, `${A}/keys`, admin)).text;
      assert.ok(!listed.includes(first.body.token), 'a list shows prefixes, never tokens');
      const vendorKey = await post('/keys', { label: 'vendor', engagement_id: refs['eng-pix'] });
      assert.deepEqual(vendorKey.body.scopes, ['read'], 'a vendor key defaults to read');
      const revoked = await post(`/keys/${first.body.id}/revoke`, undefined);
      assert.equal(revoked.status, 200);
      assert.ok(revoked.body.revoked_at);
      assert.equal((await get(env.app, '/api/v1/production', first.body.token)).status, 401);
    });

    it('documents every admin route in OpenAPI with the admin scope', async () => {
      const doc = (await get(env.app, '/api/v1/openapi.json')).body;
      for (const [path, methods] of Object.entries(
        doc.paths as Record<
          string,
          Record<string, { description: string; responses: Record<string, unknown> }>
        >,
      )) {
        if (!path.startsWith('/api/v1/admin')) continue;
        for (const op of Object.values(methods)) {
          assert.match(op.description, /Scope `admin`/);
          assert.ok(op.responses['401'] && op.responses['403']);
        }
      }
      assert.ok(
        doc.paths['/api/v1/admin/grants/{id}/revoke'].post.parameters.some(
          (p: { name: string }) => p.name === 'idempotency-key',
        ),
      );
    });
  });
}
