import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ProductionDocument } from '../src/document/schema.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get, type Reply } from './support/http.js';
import { call as rpcCall, rpc } from './support/mcp.js';
import { forget, importDoc } from './support/sync.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Row = Record<string, any>;

/** smallProduction with enough rows to page: 25 more props, a second scene history names, more grants. */
function pagedProduction(code: string): ProductionDocument {
  const doc = smallProduction(code);
  for (let i = 1; i <= 25; i++) {
    doc.assets!.push({
      ref: `prop-${i}`,
      label: `Prop ${i}`,
      kind: 'prop',
      department: 'vfx',
      status: 'planned',
    });
  }
  // history naming sc2 keeps it (retired) when a later document drops it
  doc.activity!.push({
    at: '2026-03-02T10:00:00Z',
    actor: 'Ana Ruiz',
    verb: 'noted',
    summary: 'roof',
    node: 'sc2',
  });
  doc.engagements![0]!.grants!.push({ kind: 'delivery', delivery: 'dl-int', access: 'read' });
  // an external delivery granted to no one yet: a grant on it made later is a change for the vendor
  doc.deliveries!.push({
    ref: 'dl-roto',
    title: 'Roto, reel 2',
    kind: 'external',
    status: 'draft',
    external_to: 'Pixelworks Ltd',
  });
  return doc;
}

/** The next page's path from a Link header, or null on the last page. */
function nextOf(r: Reply): string | null {
  const link = r.headers.link;
  if (link === undefined) return null;
  const m = /^<([^>]+)>; rel="next"$/.exec(String(link));
  assert.ok(m, `Link header: ${String(link)}`);
  return m[1]!;
}

/** Every page of a list from `first`, following Link headers; calls `between` after each page. */
async function walk(
  env: TestEnv,
  first: string,
  token: string,
  between: (page: number) => Promise<void> = async () => {},
): Promise<{ rows: Row[]; pages: number }> {
  const rows: Row[] = [];
  let url: string | null = first;
  let pages = 0;
  while (url !== null) {
    const r = await get(env.app, url, token);
    assert.equal(r.status, 200, `${url}: ${r.text}`);
    assert.ok(Array.isArray(r.body));
    rows.push(...r.body);
    pages++;
    url = nextOf(r);
    await between(pages);
    assert.ok(pages < 500, 'the walk ends');
  }
  return { rows, pages };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

for (const dialect of DIALECTS) {
  describe(`lists that page and updated_since [${dialect}]`, () => {
    let env: TestEnv;
    let key: string;
    let vendor: string;
    let otherKey: string;
    let refs: Record<string, number>;

    before(async () => {
      env = await createEnv(dialect);
      refs = (await env.import(pagedProduction('film'))).refs;
      await env.import(smallProduction('other'));
      key = await env.mint({ production: 'film' });
      vendor = await env.mint({ production: 'film', engagement: 'eng-pix' });
      otherKey = await env.mint({ production: 'other' });
    });
    after(() => env.close());

    const LISTS = [
      ['/api/v1/assets', 'node_id'],
      ['/api/v1/scenes', 'node_id'],
      ['/api/v1/approvals', 'id'],
      ['/api/v1/deliveries', 'id'],
      ['/api/v1/activity', 'id'],
      ['/api/v1/jobs', 'id'],
    ] as const;

    it('a list walked page by page is the unpaged list, in order, each page named by Link', async () => {
      for (const [path, id] of LISTS) {
        const whole = await get(env.app, path, key);
        assert.equal(whole.status, 200);
        if (!path.endsWith('/activity') && !path.endsWith('/jobs')) {
          assert.equal(whole.headers.link, undefined, `${path} without limit answers the whole list`);
        }
        const { rows, pages } = await walk(env, `${path}?limit=1`, key);
        assert.deepEqual(
          rows.map((r) => r[id]),
          whole.body.map((r: Row) => r[id]),
          path,
        );
        assert.deepEqual(rows, whole.body, `${path}: the rows are the list's own rows`);
        assert.equal(pages, Math.max(whole.body.length, 1), path);
      }
      const turnovers = await get(env.app, '/api/v1/turnovers', vendor);
      assert.equal(turnovers.body.length, 2);
      const paged = await walk(env, '/api/v1/turnovers?limit=1', vendor);
      assert.deepEqual(paged.rows, turnovers.body);
      assert.equal(paged.pages, 2);
    });

    it('filters travel with the Link and the cursor; the page is the filtered list', async () => {
      const whole = (await get(env.app, '/api/v1/assets?department=vfx&kind=prop', key)).body as Row[];
      assert.equal(whole.length, 25);
      const first = await get(env.app, '/api/v1/assets?department=vfx&kind=prop&limit=10', key);
      assert.equal(first.body.length, 10);
      const next = nextOf(first)!;
      assert.match(next, /^\/api\/v1\/assets\?department=vfx&kind=prop&limit=10&cursor=[A-Za-z0-9_-]+$/);
      const { rows } = await walk(env, next, key);
      assert.deepEqual([...first.body, ...rows], whole);
    });

    it('walking the assets while others write serves every row exactly once', async () => {
      const before = (await get(env.app, '/api/v1/assets', key)).body as Row[];
      const created: number[] = [];
      const { rows } = await walk(env, '/api/v1/assets?limit=4', key, async (page) => {
        // a new asset, a note that bumps an asset already served and one not yet served
        const made = await call(env.app, 'POST', '/api/v1/assets', {
          token: key,
          body: { label: `New ${page}`, kind: 'prop', department: 'vfx' },
        });
        assert.equal(made.status, 201, made.text);
        created.push(made.body.node_id);
        for (const target of [before[0]!, before[before.length - 1]!]) {
          const n = await call(env.app, 'POST', `/api/v1/assets/${target.node_id}/notes`, {
            token: key,
            body: { text: `page ${page}` },
          });
          assert.equal(n.status, 201, n.text);
        }
      });
      const ids = rows.map((r) => r.node_id);
      assert.equal(new Set(ids).size, ids.length, 'no row twice');
      for (const b of before) assert.ok(ids.includes(b.node_id), `row ${b.node_id} served`);
      // rows created mid-walk land after the cursor, so the walk meets them too
      for (const c of created.slice(0, -1)) assert.ok(ids.includes(c), `new row ${c} served`);
    });

    it('updated_since after a write answers just that row, with its new updated_at', async () => {
      await tick();
      const since = new Date().toISOString();
      await tick();
      const target = refs['loc-ward']!;
      const noted = await call(env.app, 'POST', `/api/v1/assets/${target}/notes`, {
        token: key,
        body: { text: 'after since' },
      });
      assert.equal(noted.status, 201);
      const r = await get(env.app, `/api/v1/assets?updated_since=${encodeURIComponent(since)}`, key);
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((a: Row) => a.node_id),
        [target],
      );
      assert.ok(r.body[0].updated_at > since);
      assert.equal(r.body[0].retired_at, undefined);
      const scenes = await get(env.app, `/api/v1/scenes?updated_since=${encodeURIComponent(since)}`, key);
      assert.deepEqual(scenes.body, []);

      // deciding an approval: the approval and the delivery it gates (its row shows the status)
      const approval = (await get(env.app, '/api/v1/approvals?status=pending', key)).body[0];
      await tick();
      const since2 = new Date().toISOString();
      await tick();
      const decided = await call(env.app, 'POST', `/api/v1/approvals/${approval.id}/decide`, {
        token: key,
        body: { decision: 'approved', decided_by: 'Ana Ruiz' },
      });
      assert.equal(decided.status, 200, decided.text);
      const changed = await get(
        env.app,
        `/api/v1/approvals?updated_since=${encodeURIComponent(since2)}`,
        key,
      );
      assert.deepEqual(
        changed.body.map((a: Row) => a.id),
        [approval.id],
      );
      assert.equal(changed.body[0].steps.length, 2, 'a changed approval comes with its steps');
      const activity = await get(
        env.app,
        `/api/v1/activity?updated_since=${encodeURIComponent(since2)}`,
        key,
      );
      assert.equal(activity.body.length, 1);
      assert.equal(activity.body[0].verb, 'approved');
    });

    it('updated_since brings back rows retired since, marked retired_at; plain lists never show them', async () => {
      await tick();
      const since = new Date().toISOString();
      await tick();
      const doc = pagedProduction('film');
      forget(doc, 'co-coat');
      doc.assets = doc.assets!.filter((a) => a.ref !== 'co-coat');
      doc.assets.find((a) => a.ref === 'ch-mara')!.costumes = [];
      forget(doc, 'sc2');
      doc.scenes = doc.scenes!.filter((s) => s.ref !== 'sc2');
      // and the same sync changes a delivery and a person: their updated_at move with it
      doc.deliveries!.find((d) => d.ref === 'dl-int')!.title = 'Costume refs to VFX, rev 2';
      doc.people!.find((p) => p.ref === 'p-cy')!.role = 'Costume Supervisor';
      await importDoc(env, doc, env.dir);

      const deliveries = await get(
        env.app,
        `/api/v1/deliveries?updated_since=${encodeURIComponent(since)}`,
        key,
      );
      assert.deepEqual(
        deliveries.body.map((d: Row) => [d.id, d.title]),
        [[refs['dl-int'], 'Costume refs to VFX, rev 2']],
      );
      const cy = (await get(env.app, '/api/v1/people', key)).body.find((p: Row) => p.id === refs['p-cy']);
      assert.ok(cy.updated_at > since, 'the re-import stamped the person it changed');
      const ana = (await get(env.app, '/api/v1/people', key)).body.find((p: Row) => p.id === refs['p-ana']);
      assert.ok(ana.updated_at < since, 'and left the others alone');

      const assets = await get(env.app, `/api/v1/assets?updated_since=${encodeURIComponent(since)}`, key);
      const coat = assets.body.find((a: Row) => a.node_id === refs['co-coat']);
      assert.ok(coat, 'the retired costume comes back');
      assert.ok(coat.retired_at >= since);
      assert.ok(coat.updated_at >= since);
      const scenes = await get(env.app, `/api/v1/scenes?updated_since=${encodeURIComponent(since)}`, key);
      const sc2 = scenes.body.find((s: Row) => s.node_id === refs['sc2']);
      assert.ok(sc2, 'the retired scene comes back');
      assert.equal(sc2.status, 'omitted');
      assert.ok(sc2.retired_at >= since);

      const plain = (await get(env.app, '/api/v1/assets', key)).body as Row[];
      assert.ok(!plain.some((a) => a.node_id === refs['co-coat']));
      assert.ok(!plain.some((a) => 'retired_at' in a));
      const plainScenes = (await get(env.app, '/api/v1/scenes', key)).body as Row[];
      assert.ok(!plainScenes.some((s) => s.node_id === refs['sc2']));
    });

    it('updated_since on turnovers: a new grant counts as a change for the vendor', async () => {
      await tick();
      const since = new Date().toISOString();
      await tick();
      const none = await get(env.app, `/api/v1/turnovers?updated_since=${encodeURIComponent(since)}`, vendor);
      assert.deepEqual(none.body, []);
      const admin = await env.mint({ production: 'film', scopes: ['admin'] });
      const grant = await call(env.app, 'POST', '/api/v1/admin/grants', {
        token: admin,
        body: {
          engagement_id: refs['eng-pix'],
          kind: 'delivery',
          delivery_id: refs['dl-roto'],
          access: 'submit',
        },
      });
      assert.ok(grant.status === 200 || grant.status === 201, grant.text);
      const r = await get(env.app, `/api/v1/turnovers?updated_since=${encodeURIComponent(since)}`, vendor);
      assert.deepEqual(
        r.body.map((t: Row) => [t.id, t.can_submit]),
        [[refs['dl-roto'], true]],
      );
      assert.ok(r.body[0].updated_at > since);
    });

    it('activity and jobs keep the default 50 and reach older entries with the Link or before', async () => {
      for (let i = 0; i < 55; i++) {
        const n = await call(env.app, 'POST', `/api/v1/assets/${refs['prop-1']}/notes`, {
          token: key,
          body: { text: `bulk ${i}` },
        });
        assert.equal(n.status, 201);
      }
      const first = await get(env.app, '/api/v1/activity', key);
      assert.equal(first.body.length, 50);
      const next = nextOf(first);
      assert.ok(next, 'older entries are named by the Link header');
      const all = await walk(env, '/api/v1/activity?limit=200', key);
      const total = all.rows.length;
      assert.ok(total > 60);
      const { rows } = await walk(env, '/api/v1/activity', key);
      assert.deepEqual(rows, all.rows, 'pages of 50 add up to the whole feed');
      const oldest = all.rows[total - 1]!;
      const older = await get(
        env.app,
        `/api/v1/activity?before=${encodeURIComponent(all.rows[total - 2]!.at)}`,
        key,
      );
      assert.ok(older.body.some((a: Row) => a.id === oldest.id));
      assert.ok(older.body.every((a: Row) => a.at < all.rows[total - 2]!.at));
      const clamped = await get(env.app, '/api/v1/activity?limit=1000', key);
      assert.equal(clamped.body.length, Math.min(200, total));
    });

    it('refuses a bad limit, cursor, updated_since or before with 422, naming it', async () => {
      const cursorOf = async (url: string, token = key) => {
        const link = nextOf(await get(env.app, url, token));
        assert.ok(link, url);
        return new URL(link, 'http://x').searchParams.get('cursor')!;
      };
      // a cursor of the right list and production whose key was tampered with
      const forged = (k: unknown[]) => {
        const real = JSON.parse(Buffer.from(assetsCursor, 'base64url').toString());
        return Buffer.from(JSON.stringify({ ...real, k })).toString('base64url');
      };
      const deliveryCursor = await cursorOf('/api/v1/deliveries?limit=1');
      const assetCursor = await cursorOf('/api/v1/assets?limit=1&kind=prop');
      const otherCursor = await cursorOf('/api/v1/assets?limit=1', otherKey);
      const assetsCursor = await cursorOf('/api/v1/assets?limit=1');
      const cases: Array<[string, RegExp]> = [
        ['/api/v1/assets?limit=0', /^limit/],
        ['/api/v1/assets?limit=1.5', /^limit/],
        ['/api/v1/assets?limit=1&limit=2', /^limit/],
        ['/api/v1/scenes?limit=-1', /^limit/],
        ['/api/v1/assets?cursor=not-a-cursor', /^cursor/],
        ['/api/v1/assets?cursor=%E2%9C%93', /^cursor/],
        [`/api/v1/assets?cursor=${Buffer.from('{"v":1}').toString('base64url')}`, /^cursor/],
        [`/api/v1/assets?cursor=${forged([2 ** 40, 1])}`, /^cursor: is not a cursor/],
        [`/api/v1/assets?cursor=${forged(['1', 1])}`, /^cursor: is not a cursor/],
        [`/api/v1/assets?kind=prop&cursor=${deliveryCursor}`, /^cursor: belongs to another list/],
        [`/api/v1/assets?kind=location&cursor=${assetCursor}`, /^cursor: was issued for other filters/],
        [`/api/v1/assets?cursor=${otherCursor}`, /^cursor: belongs to another list or production/],
        ['/api/v1/deliveries?updated_since=yesterday', /^updated_since/],
        ['/api/v1/deliveries?updated_since=2026-11-01', /^updated_since/],
        ['/api/v1/approvals?updated_since=2026-13-01T00:00:00Z', /^updated_since/],
        ['/api/v1/activity?before=soon', /^before/],
        ['/api/v1/jobs?cursor=', /^cursor/],
        ['/api/v1/scenes?page=2', /^page: unknown query parameter/],
      ];
      for (const [url, detail] of cases) {
        const r = await get(env.app, url, key);
        assert.equal(r.status, 422, `${url}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_field', url);
        assert.match(r.body.detail, detail, url);
      }
      const vendorCase = await get(env.app, '/api/v1/turnovers?limit=0', vendor);
      assert.equal(vendorCase.status, 422);
    });

    it('the new parameters meet the same doors: 401 without a key, 403 for a vendor key off its surface', async () => {
      for (const url of ['/api/v1/assets?limit=1', '/api/v1/scenes?updated_since=2026-01-01T00:00:00Z']) {
        const anon = await get(env.app, url);
        assert.equal(anon.status, 401);
        const v = await get(env.app, url, vendor);
        assert.equal(v.status, 403);
        assert.equal(v.body.code, 'engagement_door');
      }
      const noRead = await env.mint({ production: 'film', scopes: ['write'] });
      const r = await get(env.app, '/api/v1/deliveries?limit=1', noRead);
      assert.equal(r.status, 403);
      assert.equal(r.body.code, 'scope_missing');
    });

    it('over MCP the list tools page too: next_cursor beside the rows', async () => {
      const whole = (await get(env.app, '/api/v1/deliveries', key)).body as Row[];
      const first = await rpc(env.app, key, rpcCall(1, 'list_deliveries', { limit: 1 }));
      const page1 = first.body.result.structuredContent;
      assert.deepEqual(page1.deliveries, whole.slice(0, 1));
      assert.equal(typeof page1.next_cursor, 'string');
      const second = await rpc(
        env.app,
        key,
        rpcCall(2, 'list_deliveries', { limit: 5, cursor: page1.next_cursor }),
      );
      const page2 = second.body.result.structuredContent;
      assert.deepEqual(page2.deliveries, whole.slice(1));
      assert.equal(page2.next_cursor, undefined);
      const bad = await rpc(env.app, key, rpcCall(3, 'list_deliveries', { cursor: 'nope' }));
      assert.equal(bad.body.result.isError, true);
      assert.match(bad.body.result.content[0].text, /^cursor/);
    });

    it('no committed row is left without updated_at, whichever path wrote it', async () => {
      const tables = [
        'departments',
        'people',
        'versions',
        'media',
        'shoot_days',
        'department_notes',
        'deliveries',
        'engagements',
        'grants',
        'purchase_orders',
        'script_changes',
        'generation_jobs',
        'storage_tasks',
      ] as const;
      for (const table of tables) {
        const row = await env.handle.db
          .selectFrom(table)
          .where('updated_at', 'is', null)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        assert.equal(Number(row.n), 0, `${table}: rows without updated_at`);
      }
    });

    it('a page costs a fixed number of queries, whatever its size', async () => {
      const count = async (url: string) => {
        env.queries.count = 0;
        const r = await get(env.app, url, key);
        assert.equal(r.status, 200);
        return env.queries.count;
      };
      for (const path of ['/api/v1/assets', '/api/v1/approvals', '/api/v1/deliveries', '/api/v1/scenes']) {
        assert.equal(await count(`${path}?limit=1`), await count(`${path}?limit=20`), path);
      }
    });
  });
}
