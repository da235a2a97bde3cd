import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../src/domain/vocabulary.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { ALL_SCOPES, importRoundTrip, png, submit, type Refs } from './support/round-trip.js';

/*
 * The authorisation matrix of the round-trip surface: every route × every kind of principal ×
 * every kind of object, each cell's expected status written down from the round-trip rules (the
 * clamp in src/auth/clamp.ts and docs/architecture.md). Cases are generated from the
 * tables below: a new route is one more entry in ROUTES.
 */

type PrincipalKind =
  | 'pw' // production-wide key holding the route's scope
  | 'pw_noscope' // production-wide key holding every scope but the route's
  | 'eng_live' // engagement key, live grants (eng-pix)
  | 'eng_noscope' // same engagement, key lacking the route's scope
  | 'eng_read' // engagement with a read-only delivery grant (eng-read)
  | 'eng_revoked' // every grant revoked (eng-rev)
  | 'eng_expired' // every grant expired (eng-exp)
  | 'eng_none' // no grant at all (eng-none)
  | 'other_pw' // production-wide key of another production
  | 'other_eng'; // engagement key of another production (its eng-pix, live grants there)

type ObjectKind = 'own' | 'others' | 'foreign' | 'missing';
const OBJECTS: ObjectKind[] = ['own', 'others', 'foreign', 'missing'];
const PRINCIPALS: PrincipalKind[] = [
  'pw',
  'pw_noscope',
  'eng_live',
  'eng_noscope',
  'eng_read',
  'eng_revoked',
  'eng_expired',
  'eng_none',
  'other_pw',
  'other_eng',
];

interface World {
  env: TestEnv;
  a: Refs;
  b: Refs;
  /** Media ids created by submissions in `before`. */
  media: { own: number; others: number; foreign: number };
}

type Response = Awaited<ReturnType<TestEnv['app']['inject']>>;
type Row = [number, number, number, number]; // statuses for own, others, foreign, missing

interface ItemRoute {
  name: string;
  scope: Scope;
  notFound: string;
  /** own = reached by eng-pix; others = reached only by eng-hal; foreign = production B's. */
  target(w: World, o: ObjectKind): number;
  request(w: World, token: string, id: number): Promise<Response>;
  /** What a 200 must show about the object asked for. */
  ok(r: Response, id: number): void;
  expect: Record<PrincipalKind, Row>;
}

interface ListRoute {
  name: string;
  scope: Scope;
  url: string;
  expect: Record<PrincipalKind, number>;
  /** The body a 200 must carry, per principal. */
  body(w: World, p: PrincipalKind): unknown;
}

const get = (url: string) => (w: World, token: string) =>
  w.env.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

const bundle = (kind: 'scene' | 'character', own: string, others: string): ItemRoute => ({
  name: `GET /bundles/${kind}/{node_id}`,
  scope: 'read',
  notFound: `${kind} not found`,
  target: (w, o) => ({ own: w.a[own]!, others: w.a[others]!, foreign: w.b[own]!, missing: 999999 })[o],
  request: (w, token, id) => get(`/api/v1/bundles/${kind}/${id}`)(w, token),
  ok: (r, id) => {
    const body = JSON.parse(r.body);
    assert.equal(body.version, 1);
    assert.equal(body[kind].node_id, id);
    assert.match(body.etag, /^".+"$/);
  },
  //             own  others foreign missing
  expect: {
    pw: [200, 200, 404, 404],
    pw_noscope: [403, 403, 403, 403],
    eng_live: [200, 404, 404, 404],
    eng_noscope: [403, 403, 403, 403],
    eng_read: [200, 404, 404, 404], // scene and character grants are read grants by nature
    eng_revoked: [404, 404, 404, 404],
    eng_expired: [404, 404, 404, 404],
    eng_none: [404, 404, 404, 404],
    other_pw: [404, 404, 200, 404],
    other_eng: [404, 404, 200, 404],
  },
});

const media = (suffix: '' | '/content'): ItemRoute => ({
  name: `GET /media/{id}${suffix}`,
  scope: 'read',
  notFound: 'media not found',
  target: (w, o) => (o === 'missing' ? 999999 : w.media[o]),
  request: (w, token, id) => get(`/api/v1/media/${id}${suffix}`)(w, token),
  ok: (r, id) => {
    if (suffix === '') {
      const body = JSON.parse(r.body);
      assert.equal(body.id, id);
      assert.equal(typeof body.work_item_id, 'number');
    } else {
      assert.equal(r.headers['content-type'], 'image/png');
      assert.equal(r.rawPayload.subarray(1, 4).toString(), 'PNG');
    }
  },
  // own = submitted by eng-pix on dl-plates, where eng-read holds a read grant: the media rule says
  // turnover work is visible only to the engagement that uploaded it, never through the delivery.
  expect: {
    pw: [200, 200, 404, 404],
    pw_noscope: [403, 403, 403, 403],
    eng_live: [200, 404, 404, 404],
    eng_noscope: [403, 403, 403, 403],
    eng_read: [404, 404, 404, 404],
    eng_revoked: [404, 404, 404, 404],
    eng_expired: [404, 404, 404, 404],
    eng_none: [404, 404, 404, 404],
    other_pw: [404, 404, 200, 404],
    other_eng: [404, 404, 200, 404],
  },
});

const submission: ItemRoute = {
  name: 'POST /turnovers/{id}/submissions',
  scope: 'submit:turnover',
  notFound: 'delivery not found',
  target: (w, o) =>
    ({ own: w.a['dl-plates']!, others: w.a['dl-other']!, foreign: w.b['dl-plates']!, missing: 999999 })[o],
  request: async (w, token, id) =>
    submit(w.env, token, id, [{ name: 'files', filename: 'frame.png', content: await png('#0a0') }]),
  ok: (r, id) => {
    const body = JSON.parse(r.body);
    assert.equal(body.delivery_id, id);
    assert.equal(body.status, 'submitted');
    assert.equal(body.media.length, 1);
  },
  // 403 on a reachable delivery: a production-wide key has no engagement to submit as, and a
  // read grant is not a submit grant. 404 wherever the engagement holds no live grant.
  expect: {
    pw: [403, 403, 404, 404],
    pw_noscope: [403, 403, 403, 403],
    eng_live: [200, 404, 404, 404],
    eng_noscope: [403, 403, 403, 403],
    eng_read: [403, 404, 404, 404],
    eng_revoked: [404, 404, 404, 404],
    eng_expired: [404, 404, 404, 404],
    eng_none: [404, 404, 404, 404],
    other_pw: [404, 404, 403, 404],
    other_eng: [404, 404, 200, 404],
  },
};

const ITEM_ROUTES: ItemRoute[] = [
  bundle('scene', 'sc1', 'sc3'),
  bundle('character', 'ch-mara', 'ch-jon'),
  submission,
  media(''),
  media('/content'),
];

const EMPTY_MONEY = { purchase_orders: [], line: [], week_of: null };
const LIST_ROUTES: ListRoute[] = [
  {
    name: 'GET /turnovers',
    scope: 'read',
    url: '/api/v1/turnovers',
    expect: {
      pw: 200,
      pw_noscope: 403,
      eng_live: 200,
      eng_noscope: 403,
      eng_read: 200,
      eng_revoked: 200,
      eng_expired: 200,
      eng_none: 200,
      other_pw: 200,
      other_eng: 200,
    },
    body: (w, p) => {
      const plates = (prod: Refs, canSubmit: boolean) => [{ id: prod['dl-plates'], can_submit: canSubmit }];
      if (p === 'eng_live') return plates(w.a, true);
      if (p === 'eng_read') return plates(w.a, false);
      if (p === 'other_eng') return plates(w.b, true);
      return [];
    },
  },
  {
    // each submission as `delivery:engagement`, distinct: who sees whose work (the submissions
    // route above adds more of eng-pix's on dl-plates as the matrix runs)
    name: 'GET /submissions',
    scope: 'read',
    url: '/api/v1/submissions',
    expect: {
      pw: 200,
      pw_noscope: 403,
      eng_live: 200,
      eng_noscope: 403,
      eng_read: 200,
      eng_revoked: 200,
      eng_expired: 200,
      eng_none: 200,
      other_pw: 200,
      other_eng: 200,
    },
    body: (w, p) => {
      const pix = (prod: Refs) => `${prod['dl-plates']}:${prod['eng-pix']}`;
      if (p === 'pw') return [pix(w.a), `${w.a['dl-other']}:${w.a['eng-hal']}`].sort();
      if (p === 'eng_live') return [pix(w.a)];
      if (p === 'other_pw' || p === 'other_eng') return [pix(w.b)];
      return [];
    },
  },
  {
    name: 'GET /purchase-orders',
    scope: 'read:money',
    url: '/api/v1/purchase-orders',
    expect: {
      pw: 200,
      pw_noscope: 403,
      eng_live: 200,
      eng_noscope: 403,
      eng_read: 200,
      eng_revoked: 200,
      eng_expired: 200,
      eng_none: 200,
      other_pw: 200,
      other_eng: 200,
    },
    body: (w, p) => {
      if (p === 'eng_live') return { pos: [w.a.po4, w.a.po1], accounts: ['4200'], week_of: '2026-03-02' };
      if (p === 'other_eng') return { pos: [w.b.po4, w.b.po1], accounts: ['4200'], week_of: '2026-03-02' };
      return EMPTY_MONEY;
    },
  },
];

/** Keys per principal kind; `noscope` keys hold every scope except the route's. */
/** A fresh key of principal `p` for one case: with every scope, or every scope but the route's. */
function mintFor(env: TestEnv, scope: Scope, p: PrincipalKind): Promise<string> {
  const without = ALL_SCOPES.filter((s) => s !== scope);
  const m = (production: string, scopes: Scope[], engagement?: string) =>
    env.mint({ production, scopes, ...(engagement ? { engagement } : {}) });
  const principals: Record<PrincipalKind, () => Promise<string>> = {
    pw: () => m('film', ALL_SCOPES),
    pw_noscope: () => m('film', without),
    eng_live: () => m('film', ALL_SCOPES, 'eng-pix'),
    eng_noscope: () => m('film', without, 'eng-pix'),
    eng_read: () => m('film', ALL_SCOPES, 'eng-read'),
    eng_revoked: () => m('film', ALL_SCOPES, 'eng-rev'),
    eng_expired: () => m('film', ALL_SCOPES, 'eng-exp'),
    eng_none: () => m('film', ALL_SCOPES, 'eng-none'),
    other_pw: () => m('other', ALL_SCOPES),
    other_eng: () => m('other', ALL_SCOPES, 'eng-pix'),
  };
  return principals[p]();
}

export const MATRIX_SIZE =
  ITEM_ROUTES.length * PRINCIPALS.length * OBJECTS.length + LIST_ROUTES.length * PRINCIPALS.length;

for (const dialect of DIALECTS) {
  describe(`round-trip authorisation matrix [${dialect}] (${MATRIX_SIZE} cases)`, () => {
    const w = {} as World;

    before(async () => {
      w.env = await createEnv(dialect);
      w.a = await importRoundTrip(w.env, 'film');
      w.b = await importRoundTrip(w.env, 'other');
      const upload = async (production: string, engagement: string, delivery: number) => {
        const token = await w.env.mint({ production, scopes: ALL_SCOPES, engagement });
        const r = await submit(w.env, token, delivery, [
          { name: 'files', filename: `${engagement}.png`, content: await png('#111') },
        ]);
        assert.equal(r.statusCode, 200, r.body);
        return JSON.parse(r.body).media[0].id as number;
      };
      w.media = {
        own: await upload('film', 'eng-pix', w.a['dl-plates']!),
        others: await upload('film', 'eng-hal', w.a['dl-other']!),
        foreign: await upload('other', 'eng-pix', w.b['dl-plates']!),
      };
    });
    after(() => w.env.close());

    for (const route of ITEM_ROUTES) {
      describe(route.name, () => {
        const notFoundReplies: Array<{ cell: string; body: string; type: unknown; length: unknown }> = [];
        for (const p of PRINCIPALS) {
          OBJECTS.forEach((o, i) => {
            const status = route.expect[p][i]!;
            it(`${p} × ${o} → ${status}`, async () => {
              const key = await mintFor(w.env, route.scope, p);
              const id = route.target(w, o);
              const r = await route.request(w, key, id);
              assert.equal(r.statusCode, status, `${p} × ${o}: ${r.body}`);
              if (status === 200) {
                route.ok(r, id);
              } else {
                assert.match(String(r.headers['content-type']), /^application\/json/);
                const body = JSON.parse(r.body);
                assert.deepEqual(Object.keys(body), ['detail', 'code']);
                if (status === 404) {
                  assert.deepEqual(body, { detail: route.notFound, code: 'not_found' });
                  notFoundReplies.push({
                    cell: `${p} × ${o}`,
                    body: r.body,
                    type: r.headers['content-type'],
                    length: r.headers['content-length'],
                  });
                }
                if (p.endsWith('noscope')) {
                  assert.match(body.detail, new RegExp(route.scope));
                  assert.equal(body.code, 'scope_missing');
                }
              }
            });
          });
        }
        it('every 404 is byte-for-byte the same response', () => {
          assert.ok(notFoundReplies.length > 10);
          const first = notFoundReplies[0]!;
          for (const r of notFoundReplies) {
            assert.deepEqual(
              { body: r.body, type: r.type, length: r.length },
              {
                body: first.body,
                type: first.type,
                length: first.length,
              },
              r.cell,
            );
          }
        });
      });
    }

    for (const route of LIST_ROUTES) {
      describe(route.name, () => {
        for (const p of PRINCIPALS) {
          const status = route.expect[p];
          it(`${p} → ${status}`, async () => {
            const key = await mintFor(w.env, route.scope, p);
            const r = await get(route.url)(w, key);
            assert.equal(r.statusCode, status, r.body);
            const body = JSON.parse(r.body);
            if (status !== 200) {
              assert.deepEqual(Object.keys(body), ['detail', 'code']);
              return;
            }
            const want = route.body(w, p);
            if (route.url.endsWith('/turnovers')) {
              assert.deepEqual(
                body.map((t: { id: number; can_submit: boolean }) => ({
                  id: t.id,
                  can_submit: t.can_submit,
                })),
                want,
              );
            } else if (route.url.endsWith('/submissions')) {
              const seen = body.map(
                (s: { delivery_id: number; engagement_id: number }) => `${s.delivery_id}:${s.engagement_id}`,
              );
              assert.deepEqual([...new Set(seen)].sort(), want);
            } else if (want === EMPTY_MONEY) {
              assert.deepEqual(body, EMPTY_MONEY);
            } else {
              const { pos, accounts, week_of } = want as {
                pos: number[];
                accounts: string[];
                week_of: string;
              };
              assert.deepEqual(
                body.purchase_orders.map((o: { id: number }) => o.id),
                pos,
              );
              assert.deepEqual(
                body.line.map((l: { account: string }) => l.account),
                accounts,
              );
              assert.equal(body.week_of, week_of);
            }
          });
        }
      });
    }
  });
}
