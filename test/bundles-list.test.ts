import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { ALL_SCOPES, importRoundTrip, type Refs } from './support/round-trip.js';

interface Entry {
  kind: 'scene' | 'character';
  node_id: number;
  number?: string;
  slugline?: string;
  label?: string;
  status: string;
  expires_at: string | null;
}

const LIST = '/api/v1/bundles';

for (const dialect of DIALECTS) {
  describe(`bundle list: what this key may fetch [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let pw: string;
    let admin: string;
    const vendor: Record<string, string> = {};

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      pw = await env.mint({ production: 'film', scopes: ['read'] });
      admin = await env.mint({ production: 'film', scopes: ['admin'] });
      for (const eng of ['eng-pix', 'eng-hal', 'eng-read', 'eng-rev', 'eng-exp', 'eng-none']) {
        vendor[eng] = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: eng });
      }
    });
    after(() => env.close());

    const list = async (token: string, query = '') => {
      const r = await get(env.app, `${LIST}${query}`, token);
      assert.equal(r.status, 200, r.text);
      return r.body as Entry[];
    };
    /** Every page, following the Link header as a client would. */
    const walk = async (token: string, limit: number) => {
      const pages: Entry[][] = [];
      let url: string | undefined = `${LIST}?limit=${limit}`;
      while (url) {
        const r = await get(env.app, url, token);
        assert.equal(r.status, 200, r.text);
        pages.push(r.body as Entry[]);
        const link = r.headers.link as string | undefined;
        url = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : undefined;
      }
      return pages;
    };
    const short = (e: Entry) => [e.kind, e.node_id];

    it("a vendor key lists exactly its live scene and character grants, each with the grant's expiry", async () => {
      assert.deepEqual(await list(vendor['eng-pix']!), [
        {
          kind: 'scene',
          node_id: refs.sc1,
          number: '1',
          slugline: 'INT. WARD - NIGHT',
          status: 'planned',
          expires_at: '2099-01-01T00:00:00.000Z',
        },
        { kind: 'character', node_id: refs['ch-mara'], label: 'Mara', status: 'active', expires_at: null },
      ]);
      assert.deepEqual((await list(vendor['eng-hal']!)).map(short), [
        ['scene', refs.sc3],
        ['character', refs['ch-jon']],
      ]);
      // revoked, expired and no grants at all: nothing, never an error
      for (const eng of ['eng-rev', 'eng-exp', 'eng-none'])
        assert.deepEqual(await list(vendor[eng]!), [], eng);
      // and every entry listed is one its bundle route serves to the same key
      for (const e of await list(vendor['eng-pix']!)) {
        const r = await get(env.app, `/api/v1/bundles/${e.kind}/${e.node_id}`, vendor['eng-pix']);
        assert.equal(r.status, 200, `${e.kind} ${e.node_id}`);
      }
    });

    it('a production-wide key lists every live scene (omitted ones too) and every character', async () => {
      const all = await list(pw);
      const scenes = (await get(env.app, '/api/v1/scenes', pw)).body as Array<{ node_id: number }>;
      const characters = (await get(env.app, '/api/v1/assets?kind=character', pw)).body as Array<{
        node_id: number;
      }>;
      assert.deepEqual(all.map(short), [
        ...scenes.map((s) => ['scene', s.node_id]),
        ...characters.map((c) => ['character', c.node_id]).sort((a, b) => Number(a[1]) - Number(b[1])),
      ]);
      assert.deepEqual(
        all.filter((e) => e.kind === 'scene').map((e) => e.number),
        ['1', '2', '3'],
      );
      assert.equal(all.find((e) => e.number === '2')!.status, 'omitted');
      assert.ok(all.every((e) => e.expires_at === null));
    });

    it('pages like the other lists: the walk equals the whole list, across the scene/character seam', async () => {
      const whole = await list(pw);
      for (const limit of [1, 2, 3, 4, 1000]) {
        const pages = await walk(pw, limit);
        assert.deepEqual(pages.flat(), whole, `limit=${limit}`);
        assert.ok(
          pages.every((p) => p.length <= limit && p.length > 0),
          `limit=${limit}`,
        );
      }
      assert.deepEqual((await walk(vendor['eng-pix']!, 1)).flat(), await list(vendor['eng-pix']!));
      // a cursor is this list's only; a bad limit names its field
      const scenes = await get(env.app, '/api/v1/scenes?limit=1', pw);
      const foreign = /cursor=([^&>]+)/.exec(scenes.headers.link as string)![1];
      const refused = await get(env.app, `${LIST}?cursor=${foreign}`, pw);
      assert.equal(refused.status, 422);
      assert.equal(refused.body.field, 'cursor');
      const zero = await get(env.app, `${LIST}?limit=0`, pw);
      assert.deepEqual(zero.body, { detail: 'limit: must be >= 1', code: 'invalid_field', field: 'limit' });
    });

    it('a revoked grant leaves the list on the very next request; a new one joins it', async () => {
      const key = vendor['eng-read']!;
      assert.deepEqual((await list(key)).map(short), [
        ['scene', refs.sc1],
        ['character', refs['ch-mara']],
      ]);
      const grants = (await get(env.app, `/api/v1/admin/grants?engagement_id=${refs['eng-read']}`, admin))
        .body as Array<{ id: number; kind: string }>;
      const scene = grants.find((g) => g.kind === 'scene')!;
      const revoked = await call(env.app, 'POST', `/api/v1/admin/grants/${scene.id}/revoke`, {
        token: admin,
      });
      assert.equal(revoked.status, 200, revoked.text);
      assert.deepEqual((await list(key)).map(short), [['character', refs['ch-mara']]]);
      assert.equal((await get(env.app, `/api/v1/bundles/scene/${refs.sc1}`, key)).status, 404);

      const expires = new Date(Date.now() + 3600_000).toISOString();
      const granted = await call(env.app, 'POST', '/api/v1/admin/grants', {
        token: admin,
        body: { engagement_id: refs['eng-read'], kind: 'scene', node_id: refs.sc3, expires_at: expires },
      });
      assert.equal(granted.status, 201, granted.text);
      assert.deepEqual(await list(key), [
        {
          kind: 'scene',
          node_id: refs.sc3,
          number: '3',
          slugline: 'INT. VAULT - DAY',
          status: 'active',
          expires_at: expires,
        },
        { kind: 'character', node_id: refs['ch-mara'], label: 'Mara', status: 'active', expires_at: null },
      ]);
    });

    it('an archived engagement lists nothing; the list costs the clamp and one query per kind', async () => {
      env.queries.count = 0;
      await list(vendor['eng-hal']!);
      // key lookup, the clamp's grants, scenes, characters (and nothing per row)
      assert.ok(env.queries.count <= 5, `${env.queries.count} queries`);
      const archived = await call(env.app, 'POST', `/api/v1/admin/engagements/${refs['eng-hal']}/archive`, {
        token: admin,
      });
      assert.equal(archived.status, 200, archived.text);
      assert.deepEqual(await list(vendor['eng-hal']!), []);
    });

    it('is on the round-trip surface with scope read: no key 401, a key without read 403', async () => {
      assert.equal((await get(env.app, LIST)).status, 401);
      const noRead = await env.mint({ production: 'film', scopes: ['write'] });
      const r = await get(env.app, LIST, noRead);
      assert.equal(r.status, 403);
      assert.equal(r.body.code, 'scope_missing');
    });
  });
}
