import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DocumentError } from '../src/document/parse.js';
import { queueMoveTask } from '../src/modules/storage-tasks/service.js';
import { submit } from './support/round-trip.js';
import { jpeg, upload } from './support/write.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { aWeekOfEdits } from './support/season.js';
import { call, get } from './support/http.js';
import {
  demoDir,
  demoDoc,
  forget,
  importDoc,
  moved,
  planDoc,
  readState,
  type Answer,
} from './support/sync.js';

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const ALL = ['read', 'write', 'submit:turnover', 'read:money'] as const;

/** Every answer but the activity feed (a sync appends its own entry there). */
function withoutFeed(state: Map<string, Answer>): Map<string, Answer> {
  return new Map([...state].filter(([url]) => !url.includes('/activity')));
}

for (const dialect of DIALECTS) {
  describe(`re-import as a sync by ref [${dialect}]`, () => {
    let env: TestEnv;
    let n = 0;
    const code = () => `season-${++n}`;
    const dir = demoDir('episodic');
    before(async () => {
      env = await createEnv(dialect);
    });
    after(() => env.close());

    it('an unchanged document changes nothing: same ids, same answers, same ETags, one activity entry', async () => {
      const doc = demoDoc('episodic', code());
      const first = await importDoc(env, doc, dir, false);
      const token = await env.mint({ production: doc.production.code, scopes: [...ALL] });
      const vendor = await env.mint({
        production: doc.production.code,
        engagement: 'eng-pixel',
        scopes: [...ALL],
      });
      const before = await readState(env.app, token, { vendor });
      const plan = await planDoc(env, doc, dir);
      assert.deepEqual(moved(plan), {}, 'the plan moves nothing');
      assert.deepEqual(plan.changes, []);
      const second = await importDoc(env, doc, dir);
      assert.deepEqual(second.refs, first.refs, 'every ref keeps its id');
      assert.deepEqual(moved(second.plan), {});
      const after = await readState(env.app, token, { vendor });
      assert.deepEqual(withoutFeed(after), withoutFeed(before));
      const feed = (await get(env.app, '/api/v1/activity?limit=1', token)).body;
      assert.equal(feed[0].verb, 'synced');
      assert.equal(feed[0].summary, 'production document: no changes');
    });

    it('a renamed scene keeps its id and its bundle ETag changes; others keep theirs', async () => {
      const doc = demoDoc('episodic', code());
      const { refs } = await importDoc(env, doc, dir, false);
      const token = await env.mint({ production: doc.production.code });
      const renamed = refs['sc101-12']!;
      const other = refs['sc102-9']!;
      const etag = async (id: number) =>
        (await get(env.app, `/api/v1/bundles/scene/${id}`, token)).headers.etag;
      const [was, otherWas] = [await etag(renamed), await etag(other)];
      const next = clone(doc);
      next.scenes!.find((s) => s.ref === 'sc101-12')!.slugline = 'INT. WARD - LATER';
      const out = await importDoc(env, next, dir);
      assert.equal(out.refs['sc101-12'], renamed);
      assert.deepEqual(moved(out.plan), { scenes: { updated: 1 } });
      assert.deepEqual(out.plan.changes, [
        { kind: 'scenes', action: 'updated', key: 'sc101-12', id: renamed, fields: ['label', 'slugline'] },
      ]);
      assert.notEqual(await etag(renamed), was);
      assert.equal(await etag(other), otherWas);
      const bundle = (await get(env.app, `/api/v1/bundles/scene/${renamed}`, token)).body;
      assert.equal(bundle.scene.slugline, 'INT. WARD - LATER');
    });

    it('a removed asset that has versions is retired: it leaves every list, record, bundle and clamp', async () => {
      const doc = demoDoc('episodic', code());
      const { refs } = await importDoc(env, doc, dir, false);
      const token = await env.mint({ production: doc.production.code });
      const vendor = await env.mint({
        production: doc.production.code,
        engagement: 'eng-pixel',
        scopes: ['read'],
      });
      const porter = refs['ch-porter']!;
      const coat = refs['co-porter-coat']!;
      const released = (await get(env.app, `/api/v1/assets/${coat}`, token)).body.versions.find(
        (v: { released: boolean }) => v.released,
      );
      const ticketMedia = await call(env.app, 'GET', `/api/v1/bundles/character/${porter}`, {
        token: vendor,
      });
      assert.equal(ticketMedia.status, 200, 'the vendor reaches the character before');
      const next = clone(doc);
      for (const ref of ['ch-porter', 'co-porter-coat']) {
        forget(next, ref);
        next.assets = next.assets!.filter((a) => a.ref !== ref);
      }
      const out = await importDoc(env, next, dir);
      const retired = out.plan.changes.filter((c) => c.action === 'retired').map((c) => c.key);
      assert.ok(retired.includes('co-porter-coat'), 'the costume with versions is retired, not deleted');
      assert.equal(out.refs['co-porter-coat'], undefined, 'a retired ref is no longer the document’s');
      const assets = (await get(env.app, '/api/v1/assets', token)).body as Array<{ node_id: number }>;
      assert.ok(!assets.some((a) => a.node_id === coat || a.node_id === porter));
      for (const url of [`/api/v1/assets/${coat}`, `/api/v1/bundles/character/${porter}`]) {
        const r = await get(env.app, url, token);
        assert.equal(r.status, 404, url);
        assert.deepEqual(
          await get(env.app, url.replace(String(coat), '999999'), token).then((x) => x.status),
          404,
        );
      }
      assert.equal((await get(env.app, `/api/v1/bundles/character/${porter}`, vendor)).status, 404);
      const scenesUsing = (await get(env.app, '/api/v1/scenes', token)).body as Array<{ node_id: number }>;
      for (const s of scenesUsing) {
        const b = (await get(env.app, `/api/v1/bundles/scene/${s.node_id}`, token)).body;
        assert.ok(!b.assets.some((a: { node_id: number }) => a.node_id === coat));
      }
      if (released?.media_path) {
        const media = await env.handle.db
          .selectFrom('versions')
          .where('id', '=', released.id)
          .select(['media_id'])
          .executeTakeFirstOrThrow();
        const r = await get(env.app, `/api/v1/media/${media.media_id}`, vendor);
        assert.equal(r.status, 404, 'its media leaves the vendor’s reach');
      }
      const row = await env.handle.db
        .selectFrom('nodes')
        .where('id', '=', coat)
        .select(['retired_at'])
        .executeTakeFirstOrThrow();
      assert.ok(row.retired_at, 'the row and its versions stay, retired');
      const versions = await env.handle.db
        .selectFrom('versions')
        .where('node_id', '=', coat)
        .select('id')
        .execute();
      assert.ok(versions.length > 0);
      // the ref comes back: the same object, restored with its id
      const back = await importDoc(env, doc, dir);
      assert.equal(back.refs['co-porter-coat'], coat);
      assert.equal((await get(env.app, `/api/v1/assets/${coat}`, token)).status, 200);
    });

    it('a removed scene is omitted and retired; a removed prop nothing refers to is deleted', async () => {
      const doc = demoDoc('episodic', code());
      const { refs } = await importDoc(env, doc, dir, false);
      const token = await env.mint({ production: doc.production.code });
      const next = clone(doc);
      next.assets!.push({ ref: 'pr-spare', label: 'Spare prop', kind: 'prop' });
      await importDoc(env, next, dir);
      const spare = (await importDoc(env, next, dir)).refs['pr-spare']!;
      forget(next, 'sc103-11');
      next.scenes = next.scenes!.filter((s) => s.ref !== 'sc103-11');
      next.assets = next.assets!.filter((a) => a.ref !== 'pr-spare');
      const out = await importDoc(env, next, dir);
      const scene = refs['sc103-11']!;
      assert.deepEqual(
        out.plan.changes
          .filter((c) => c.action === 'retired' || c.action === 'deleted')
          .map((c) => [c.kind, c.action, c.key]),
        [
          ['scenes', 'retired', 'sc103-11'],
          ['assets', 'deleted', 'pr-spare'],
          ['department_notes', 'deleted', 'n-103-11-camera'],
          ['grants', 'retired', 'eng-pixel/scene:sc103-11'],
          ['script_changes', 'deleted', 'scx-6'],
        ],
      );
      const row = await env.handle.db
        .selectFrom('nodes')
        .where('id', '=', scene)
        .select(['status', 'retired_at'])
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'omitted');
      assert.ok(row.retired_at);
      assert.equal(
        await env.handle.db.selectFrom('nodes').where('id', '=', spare).select('id').executeTakeFirst(),
        undefined,
      );
      const scenes = (await get(env.app, '/api/v1/scenes', token)).body as Array<{ node_id: number }>;
      assert.ok(!scenes.some((s) => s.node_id === scene));
      const schedule = (await get(env.app, '/api/v1/schedule', token)).body as Array<{
        scenes: Array<{ node_id: number }>;
      }>;
      assert.ok(!schedule.some((d) => d.scenes.some((s) => s.node_id === scene)));
      const production = (await get(env.app, '/api/v1/production', token)).body;
      assert.equal(production.stats.scenes, scenes.length);
    });

    it('what arrived through the API survives a sync byte for byte, and the plan says what it kept', async () => {
      const doc = demoDoc('episodic', code());
      const { refs, production } = await importDoc(env, doc, dir, false);
      const pid = production.id;
      const token = await env.mint({ production: doc.production.code, scopes: [...ALL] });
      const vendor = await env.mint({
        production: doc.production.code,
        engagement: 'eng-pixel',
        scopes: ['read', 'submit:turnover'],
      });
      const created = await call(env.app, 'POST', '/api/v1/assets', {
        token,
        body: { label: 'Fire extinguisher', kind: 'prop', department: 'art' },
        headers: { 'idempotency-key': 'prop-1' },
      });
      assert.equal(created.status, 201);
      assert.equal(
        (
          await call(env.app, 'POST', `/api/v1/assets/${refs['co-mara-coat']}/notes`, {
            token,
            body: { text: 'Hem 2 cm' },
          })
        ).status,
        201,
      );
      const landed = await upload(env.app, `/api/v1/assets/${refs['fx-3am']}/versions`, {
        token,
        files: [{ name: 'still.jpg', bytes: await jpeg(7) }],
      });
      assert.equal(landed.status, 201);
      const decided = await call(env.app, 'POST', `/api/v1/approvals/${refs['ap-3am-2']}/decide`, {
        token,
        body: { decision: 'approved', decided_by: 'Kenji Watanabe', note: 'Ship it' },
      });
      assert.equal(decided.status, 200);
      const sent = await submit(env, vendor, refs['dl-101-comp']!, [
        { name: 'files', filename: 'comp.jpg', content: await jpeg(9), contentType: 'image/jpeg' },
      ]);
      assert.equal(sent.statusCode, 200, sent.body);
      const events = await call(env.app, 'POST', '/api/v1/storage/events', {
        token,
        body: {
          filespace: 'nightfall-main',
          events: [
            {
              event_type: 'create',
              path: 'plates/new.exr',
              source: 'scan',
              dedupe_key: 'k1',
              detected_at: '2026-11-20T10:00:00Z',
            },
          ],
        },
      });
      assert.equal(events.status, 200);
      await queueMoveTask(env.handle.db, {
        productionId: pid,
        from: 'plates/new.exr',
        to: 'plates/final.exr',
        approvedBy: 'ops',
      });

      const db = env.handle.db;
      const snapshot = async () => ({
        assets: await db
          .selectFrom('nodes')
          .where('production_id', '=', pid)
          .where('ref', 'is', null)
          .selectAll()
          .execute(),
        versions: await db
          .selectFrom('versions')
          .where('production_id', '=', pid)
          .where('source', '=', 'api')
          .selectAll()
          .execute(),
        released: await db.selectFrom('versions').where('id', '=', refs['v-3am-2']!).selectAll().execute(),
        decision: await db
          .selectFrom('approval_steps')
          .where('approval_id', '=', refs['ap-3am-2']!)
          .selectAll()
          .execute(),
        approval: await db.selectFrom('approvals').where('id', '=', refs['ap-3am-2']!).selectAll().execute(),
        notes: await db
          .selectFrom('version_notes')
          .where('production_id', '=', pid)
          .selectAll()
          .orderBy('id')
          .execute(),
        media: await db
          .selectFrom('media')
          .where('production_id', '=', pid)
          .selectAll()
          .orderBy('id')
          .execute(),
        work: await db.selectFrom('work_items').where('production_id', '=', pid).selectAll().execute(),
        library: await db
          .selectFrom('library_files')
          .where('production_id', '=', pid)
          .selectAll()
          .orderBy('id')
          .execute(),
        events: await db.selectFrom('storage_events').where('production_id', '=', pid).selectAll().execute(),
        tasks: await db.selectFrom('storage_tasks').where('production_id', '=', pid).selectAll().execute(),
        activity: await db
          .selectFrom('activity')
          .where('production_id', '=', pid)
          .selectAll()
          .orderBy('id')
          .execute(),
        idempotency: await db.selectFrom('idempotency_keys').selectAll().orderBy('id').execute(),
        keys: await db
          .selectFrom('api_keys')
          .where('production_id', '=', pid)
          .select(['id', 'prefix', 'hash', 'scopes', 'engagement_id', 'revoked_at'])
          .orderBy('id')
          .execute(),
      });
      const before = await snapshot();

      // the document disagrees with the API: it drops the decided approval, says the version it
      // released is unreleased work, and drops the delivery the vendor submitted to
      const next = clone(doc);
      next.approvals = next.approvals!.filter((a) => a.ref !== 'ap-3am-2');
      const v = next.assets!.find((a) => a.ref === 'fx-3am')!.versions!.find((x) => x.ref === 'v-3am-2')!;
      v.released = false;
      v.status = 'wip';
      forget(next, 'dl-101-comp');
      next.deliveries = next.deliveries!.filter((d) => d.ref !== 'dl-101-comp');
      const out = await importDoc(env, next, dir);

      const after = await snapshot();
      const { activity: feedAfter, ...restAfter } = after;
      const { activity: feedBefore, ...restBefore } = before;
      assert.deepEqual(restAfter, restBefore, 'every row the API wrote is as it was');
      assert.deepEqual(feedAfter.slice(0, feedBefore.length), feedBefore);
      assert.equal(feedAfter.length, feedBefore.length + 1, 'plus the sync’s own entry');
      assert.deepEqual(
        out.plan.changes
          .filter((c) => c.action !== 'updated' && c.action !== 'created')
          .map((c) => [c.kind, c.action, c.key, c.fields ?? c.reason]),
        [
          ['versions', 'kept', 'v-3am-2', ['status', 'released']],
          ['approvals', 'kept', 'ap-3am-2', 'decided through the API'],
          ['deliveries', 'retired', 'dl-101-comp', 'archived; referred to by submissions'],
          ['grants', 'retired', 'eng-pixel/delivery:dl-101-comp/submit', 'revoked'],
        ],
      );
      const asset = await get(env.app, `/api/v1/assets/${created.body.node_id}`, token);
      assert.equal(asset.status, 200, 'the asset created through the API is still there');
      const turnovers = (await get(env.app, '/api/v1/turnovers', vendor)).body as Array<{ id: number }>;
      assert.ok(
        !turnovers.some((t) => t.id === refs['dl-101-comp']),
        'the retired delivery leaves the vendor’s turnovers',
      );
      const late = await submit(env, vendor, refs['dl-101-comp']!, [
        { name: 'files', filename: 'late.jpg', content: await jpeg(3), contentType: 'image/jpeg' },
      ]);
      assert.equal(late.statusCode, 404, 'and takes no more submissions');
      const deliveries = (await get(env.app, '/api/v1/deliveries', token)).body as Array<{ id: number }>;
      assert.ok(!deliveries.some((d) => d.id === refs['dl-101-comp']));
    });

    it('a vendor key reaches what its live grants name; a removed grant, or an archived engagement, is gone at once', async () => {
      const doc = demoDoc('episodic', code());
      const { refs } = await importDoc(env, doc, dir, false);
      const pixel = await env.mint({
        production: doc.production.code,
        engagement: 'eng-pixel',
        scopes: ['read', 'read:money'],
      });
      const bramble = await env.mint({
        production: doc.production.code,
        engagement: 'eng-bramble',
        scopes: ['read', 'read:money'],
      });
      const bundle = (key: string, ref: string) =>
        get(env.app, `/api/v1/bundles/scene/${refs[ref]}`, key).then((r) => r.status);
      assert.equal(await bundle(pixel, 'sc101-12'), 200);
      assert.equal(await bundle(pixel, 'sc102-9'), 200);
      assert.equal(await bundle(bramble, 'sc102-21'), 200);
      const next = clone(doc);
      const pixelEngagement = next.engagements!.find((e) => e.ref === 'eng-pixel')!;
      pixelEngagement.grants = pixelEngagement.grants!.filter((g) => g.node !== 'sc102-9');
      next.engagements = next.engagements!.filter((e) => e.ref !== 'eng-bramble');
      const out = await importDoc(env, next, dir);
      assert.deepEqual(moved(out.plan), { engagements: { retired: 1 }, grants: { retired: 7 } });
      assert.equal(await bundle(pixel, 'sc101-12'), 200, 'what is still granted is still reached');
      assert.equal(await bundle(pixel, 'sc102-9'), 404, 'a removed grant is revoked at once');
      assert.equal(await bundle(bramble, 'sc102-21'), 404, 'an archived engagement reaches nothing');
      assert.deepEqual((await get(env.app, '/api/v1/turnovers', bramble)).body, []);
      const money = (await get(env.app, '/api/v1/purchase-orders', bramble)).body;
      assert.deepEqual(money, { purchase_orders: [], line: [], week_of: null });
    });

    it('refuses a document version that takes the number of a version landed through the API', async () => {
      const doc = demoDoc('episodic', code());
      const { refs } = await importDoc(env, doc, dir, false);
      const token = await env.mint({ production: doc.production.code });
      const landed = await upload(env.app, `/api/v1/assets/${refs['fx-3am']}/versions`, {
        token,
        files: [{ name: 'still.jpg', bytes: await jpeg(5) }],
      });
      assert.equal(landed.status, 201);
      const next = clone(doc);
      const i = next.assets!.findIndex((a) => a.ref === 'fx-3am');
      next.assets![i]!.versions!.push({ version: landed.body.version, variant: 'Main' });
      const j = next.assets![i]!.versions!.length - 1;
      await assert.rejects(
        () => importDoc(env, next, dir),
        (err: Error) =>
          err instanceof DocumentError &&
          err.message ===
            `assets[${i}].versions[${j}].version: version ${landed.body.version} of "fx-3am" was landed through the API; number the document's versions past the asset's highest.`,
      );
    });

    it('a failed sync (an unknown ref) changes nothing', async () => {
      const doc = demoDoc('episodic', code());
      await importDoc(env, doc, dir, false);
      const token = await env.mint({ production: doc.production.code });
      const before = await readState(env.app, token);
      const next = clone(doc);
      next.scenes![0]!.slugline = 'CHANGED';
      next.scenes![1]!.assets!.push('ch-nobody');
      await assert.rejects(
        () => importDoc(env, next, dir),
        (err: Error) =>
          err instanceof DocumentError &&
          /^scenes\[1\]\.assets\[\d+\]: no object in the document has the ref "ch-nobody"\.$/.test(
            err.message,
          ),
      );
      assert.deepEqual(await readState(env.app, token), before);
    });

    it('a week of breakdown edits on both demo productions: these counts, planned and then done', async () => {
      const expected = {
        episodic: {
          people: { updated: 1 },
          scenes: { created: 1, updated: 4, retired: 1 },
          assets: { created: 1, updated: 1, retired: 1 },
          shoot_days: { updated: 1 },
          approvals: { deleted: 1 },
          department_notes: { deleted: 1 },
          deliveries: { updated: 1 },
          grants: { created: 1, retired: 2 },
          script_changes: { deleted: 1 },
        },
        single: {
          people: { updated: 1 },
          scenes: { created: 1, updated: 3, deleted: 1 },
          assets: { created: 1, updated: 1, retired: 1 },
          shoot_days: { updated: 1 },
          deliveries: { updated: 1 },
          grants: { created: 1, retired: 1 },
          script_changes: { deleted: 1 },
        },
      };
      for (const which of ['episodic', 'single'] as const) {
        const doc = demoDoc(which, code());
        const first = await importDoc(env, doc, demoDir(which), false);
        const edited = aWeekOfEdits(doc);
        const plan = await planDoc(env, edited, demoDir(which));
        assert.deepEqual(moved(plan), expected[which], which);
        const out = await importDoc(env, edited, demoDir(which));
        assert.deepEqual(out.plan.changes, plan.changes, `${which}: the sync did what the plan said`);
        for (const [ref, id] of Object.entries(first.refs)) {
          if (ref in out.refs) assert.equal(out.refs[ref], id, `${which}: ${ref} kept its id`);
        }
        const entry = await env.handle.db
          .selectFrom('activity')
          .where('production_id', '=', first.production.id)
          .where('verb', '=', 'synced')
          .select(['summary'])
          .executeTakeFirstOrThrow();
        assert.match(entry.summary, /^production document: people 1 updated, scenes 1 created/);
      }
    });

    it('--plan changes nothing, and the sync then does exactly what it said', async () => {
      const doc = demoDoc('episodic', code());
      await importDoc(env, doc, dir, false);
      const token = await env.mint({ production: doc.production.code });
      const next = clone(doc);
      next.scenes![0]!.synopsis = 'Rewritten.';
      next.scenes!.push({
        ref: 'sc-new',
        number: '104-1',
        slugline: 'EXT. ROOF - NIGHT',
        episode: 'ep103',
        assets: ['ch-mara'],
      });
      next.deliveries![0]!.status = 'accepted';
      next.engagements![0]!.grants!.push({ kind: 'scene', node: 'sc-new' });
      next.engagements![0]!.grants!.shift();
      next.people![0]!.role = 'Costume Supervisor';
      const before = await readState(env.app, token);
      const plan = await planDoc(env, next, dir);
      assert.deepEqual(await readState(env.app, token), before, 'a plan writes nothing');
      const out = await importDoc(env, next, dir);
      assert.deepEqual(out.plan.counts, plan.counts);
      assert.deepEqual(out.plan.changes, plan.changes);
      assert.deepEqual(moved(plan), {
        people: { updated: 1 },
        scenes: { created: 1, updated: 1 },
        deliveries: { updated: 1 },
        grants: { created: 1, retired: 1 },
      });
    });
  });
}
