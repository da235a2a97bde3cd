import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { importDocument } from '../src/document/import.js';
import { queueMoveTask } from '../src/modules/storage-tasks/service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call } from './support/http.js';
import { importRoundTrip, png, submit } from './support/round-trip.js';
import { jpeg, upload } from './support/write.js';

/**
 * Every committed write bumps its production's revision once and logs each object it touched;
 * a refused write leaves both alone. (The revision keys caches; the log feeds change readers.)
 */
for (const dialect of DIALECTS) {
  describe(`the change log of writes [${dialect}]`, () => {
    let env: TestEnv;
    let key: string;
    let film: number;
    let refs: Record<string, number>;

    before(async () => {
      env = await createEnv(dialect);
      refs = (await env.import(smallProduction('film'))).refs;
      await env.import(smallProduction('other'));
      key = await env.mint({ production: 'film' });
      film = (
        await env.handle.db
          .selectFrom('productions')
          .where('code', '=', 'film')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
    });
    after(() => env.close());

    const revision = async (code = 'film') =>
      (
        await env.handle.db
          .selectFrom('productions')
          .where('code', '=', code)
          .select('revision')
          .executeTakeFirstOrThrow()
      ).revision;

    /** The changes logged after `since` (a change id), as `kind:id:op` strings, in id order. */
    const changesAfter = async (since: number) =>
      (
        await env.handle.db
          .selectFrom('changes')
          .where('production_id', '=', film)
          .where('id', '>', since)
          .select(['id', 'kind', 'object_id', 'op', 'actor', 'revision'])
          .orderBy('id')
          .execute()
      ).map((c) => ({ ...c, id: Number(c.id), line: `${c.kind}:${c.object_id}:${c.op}` }));

    const lastChangeId = async () =>
      Number(
        (
          await env.handle.db
            .selectFrom('changes')
            .select((eb) => eb.fn.max('id').as('m'))
            .executeTakeFirst()
        )?.m ?? 0,
      );

    /** Runs one write and answers its changes, checking the revision moved by exactly one. */
    async function logged(write: () => Promise<unknown>): Promise<string[]> {
      const since = await lastChangeId();
      const before = await revision();
      await write();
      const after = await revision();
      const rows = await changesAfter(since);
      assert.equal(after, before + 1, 'one write, one revision');
      assert.ok(rows.every((r) => r.revision === after));
      return rows.map((r) => r.line).sort();
    }

    it('POST /assets logs the created asset under the key', async () => {
      let id = 0;
      const lines = await logged(async () => {
        const r = await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label: 'Lamp' } });
        assert.equal(r.status, 201);
        id = r.body.node_id;
      });
      assert.deepEqual(lines, [`asset:${id}:created`]);
      const [row] = await changesAfter((await lastChangeId()) - 1);
      assert.equal(row!.actor, 'test key');
    });

    it('a note logs the note and the asset it touched; a note without a version only the asset', async () => {
      const coat = refs['co-coat']!;
      let noteId = 0;
      const onVersion = await logged(async () => {
        const r = await call(env.app, 'POST', `/api/v1/assets/${coat}/notes`, {
          token: key,
          body: { text: 'Hem is long' },
        });
        assert.equal(r.status, 201);
        noteId = r.body.id;
      });
      assert.deepEqual(onVersion, [`asset:${coat}:updated`, `note:${noteId}:created`].sort());
      const ward = refs['loc-ward']!;
      const onActivity = await logged(async () => {
        const r = await call(env.app, 'POST', `/api/v1/assets/${ward}/notes`, {
          token: key,
          body: { text: 'Check the lights' },
        });
        assert.equal(r.body.landed_on, 'activity');
      });
      assert.deepEqual(onActivity, [`asset:${ward}:updated`]);
    });

    it('a landed version logs the version, its media and the asset', async () => {
      const coat = refs['co-coat']!;
      let body: { id: number } = { id: 0 };
      const lines = await logged(async () => {
        const r = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
          token: key,
          files: [{ name: 'still.jpg', bytes: await jpeg(3), type: 'image/jpeg' }],
        });
        assert.equal(r.status, 201);
        body = r.body;
      });
      const media = await env.handle.db
        .selectFrom('versions')
        .where('id', '=', body.id)
        .select('media_id')
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        lines,
        [`asset:${coat}:updated`, `media:${media.media_id}:created`, `version:${body.id}:created`].sort(),
      );
    });

    it('deciding the last step logs the approval, the released version and its asset', async () => {
      const ap = refs['ap-coat']!;
      const first = await logged(async () => {
        const r = await call(env.app, 'POST', `/api/v1/approvals/${ap}/decide`, {
          token: key,
          body: { decision: 'approved', decided_by: 'Ana Ruiz' },
        });
        assert.equal(r.status, 200);
      });
      assert.deepEqual(first, [`approval:${ap}:updated`, `asset:${refs['co-coat']}:updated`].sort());
      const last = await logged(async () => {
        const r = await call(env.app, 'POST', `/api/v1/approvals/${ap}/decide`, {
          token: key,
          body: { decision: 'approved', decided_by: 'Ben Okafor' },
        });
        assert.equal(r.status, 200, r.text);
      });
      assert.deepEqual(
        last,
        [
          `approval:${ap}:updated`,
          `asset:${refs['co-coat']}:updated`,
          `version:${refs['v-coat-2']}:updated`,
        ].sort(),
      );
    });

    it('storage events log each new event; a pure replay changes nothing', async () => {
      const events = [1, 2].map((i) => ({
        event_type: 'create',
        path: `plates/r2/sh0${i}0.exr`,
        source: 'scan',
        dedupe_key: `k-${i}`,
        detected_at: '2026-03-04T10:00:00Z',
      }));
      const send = () =>
        call(env.app, 'POST', '/api/v1/storage/events', {
          token: key,
          body: { filespace: 'film-fs', events },
        });
      const lines = await logged(async () => assert.equal((await send()).body.accepted, 2));
      assert.equal(lines.length, 2);
      assert.ok(lines.every((l) => /^storage_event:\d+:created$/.test(l)));
      const before = await revision();
      assert.equal((await send()).body.duplicates, 2);
      assert.equal(await revision(), before);
    });

    it('a queued move and its ack log the task; a second ack changes nothing', async () => {
      let id = 0;
      const queued = await logged(async () => {
        id = (
          await queueMoveTask(env.handle.db, {
            productionId: film,
            from: 'plates/r1/sh010.exr',
            to: 'plates/r1/sh010_v2.exr',
            approvedBy: 'Ada Admin',
          })
        ).id;
      });
      assert.deepEqual(queued, [`storage_task:${id}:created`]);
      const ack = () =>
        call(env.app, 'POST', '/api/v1/storage/tasks/ack', { token: key, body: { task_id: id, ok: true } });
      assert.deepEqual(await logged(async () => assert.equal((await ack()).status, 200)), [
        `storage_task:${id}:updated`,
      ]);
      const before = await revision();
      assert.equal((await ack()).body.already_settled, true);
      assert.equal(await revision(), before);
    });

    it('a media proxy logs the new media and retires the one it replaces', async () => {
      const bytes = (await jpeg(9)).toString('base64');
      const send = () =>
        call(env.app, 'POST', '/api/v1/storage/media-proxy', {
          token: key,
          body: { filespace: 'film-fs', path: 'plates/r1/sh010_v2.exr', bytes },
        });
      const first = await logged(async () => assert.equal((await send()).status, 200));
      assert.equal(first.length, 1);
      const firstId = Number(first[0]!.split(':')[1]);
      const second = await logged(async () => assert.equal((await send()).status, 200));
      assert.ok(second.includes(`media:${firstId}:retired`), second.join());
      assert.equal(second.length, 2);
    });

    it('refused writes change neither the revision nor the log', async () => {
      const before = await revision();
      const since = await lastChangeId();
      const refusals = [
        await call(env.app, 'POST', '/api/v1/assets/999999/notes', { token: key, body: { text: 'x' } }),
        await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label: ' ' } }),
        await call(env.app, 'POST', `/api/v1/approvals/${refs['ap-done']}/decide`, {
          token: key,
          body: { decision: 'approved', decided_by: 'Ben Okafor' },
        }),
      ];
      assert.deepEqual(
        refusals.map((r) => r.status),
        [404, 422, 409],
      );
      assert.equal(await revision(), before);
      assert.deepEqual(await changesAfter(since), []);
    });

    it('admin grants and engagements log what they create, archive and revoke; keys log nothing', async () => {
      const admin = await env.mint({ production: 'film', scopes: ['admin'] });
      const post = (url: string, body?: unknown) =>
        call(env.app, 'POST', `/api/v1/admin${url}`, { token: admin, body });
      let id = 0;
      const granted = await logged(async () => {
        const r = await post('/grants', { engagement_id: refs['eng-hal'], kind: 'scene', node_id: refs.sc1 });
        assert.equal(r.status, 201, r.text);
        id = r.body.id;
      });
      assert.deepEqual(granted, [`grant:${id}:created`]);
      assert.deepEqual(
        await logged(async () => assert.equal((await post(`/grants/${id}/revoke`)).status, 200)),
        [`grant:${id}:retired`],
      );
      assert.deepEqual(
        await logged(async () =>
          assert.equal((await post(`/engagements/${refs['eng-hal']}/archive`)).status, 200),
        ),
        [`engagement:${refs['eng-hal']}:retired`],
      );
      const before = await revision();
      assert.equal((await post('/keys', { label: 'ci', scopes: ['read'] })).status, 201);
      assert.equal(await revision(), before, 'keys are read on every request, not cached by revision');
    });

    it('a sync logs what its plan changed under the importing actor; an unchanged one logs nothing', async () => {
      const doc = smallProduction('film');
      const sync = (d: typeof doc) =>
        importDocument(env.handle.db, structuredClone(d), {
          store: env.store,
          baseDir: env.dir,
          replace: true,
          actor: 'coordinator',
        });
      const unchanged = await revision();
      await sync(doc);
      assert.equal(await revision(), unchanged);
      doc.scenes![0]!.slugline = 'INT. WARD - LATER';
      const lines = await logged(() => sync(doc));
      assert.ok(lines.includes(`scene:${refs.sc1}:updated`), lines.join());
      const [row] = (await changesAfter((await lastChangeId()) - 1)).slice(-1);
      assert.equal(row!.actor, 'coordinator');
    });

    it("one production's writes never move another's revision", async () => {
      const other = await revision('other');
      await call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label: 'Chair' } });
      assert.equal(await revision('other'), other);
    });

    it('concurrent writes get distinct revisions, and change ids follow revision order', async () => {
      const since = await lastChangeId();
      const before = await revision();
      const writes = Array.from({ length: 8 }, (_, i) =>
        call(env.app, 'POST', '/api/v1/assets', { token: key, body: { label: `Prop ${i}` } }),
      );
      assert.ok((await Promise.all(writes)).every((r) => r.status === 201));
      const rows = await changesAfter(since);
      assert.deepEqual(
        rows.map((r) => r.revision),
        Array.from({ length: 8 }, (_, i) => before + 1 + i),
      );
    });
  });

  describe(`the change log of turnover submissions [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'rt');
    });
    after(() => env.close());

    it('a submission logs itself and each of its media', async () => {
      const token = await env.mint({ production: 'rt', engagement: 'eng-pix', scopes: ['submit:turnover'] });
      const before = await env.handle.db.selectFrom('changes').select(['kind', 'op']).execute();
      assert.deepEqual(
        before,
        [{ kind: 'production', op: 'created' }],
        'the import logs its production alone',
      );
      const r = await submit(env, token, refs['dl-plates']!, [
        { name: 'files', filename: 'a.png', contentType: 'image/png', content: await png('#0a0') },
        { name: 'files', filename: 'b.png', contentType: 'image/png', content: await png('#00a') },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      const body = JSON.parse(r.body) as { id: number; media: Array<{ id: number }> };
      const rows = await env.handle.db
        .selectFrom('changes')
        .where('kind', '<>', 'production')
        .select(['kind', 'object_id', 'op'])
        .execute();
      assert.deepEqual(
        rows.map((c) => `${c.kind}:${c.object_id}:${c.op}`).sort(),
        [`submission:${body.id}:created`, ...body.media.map((m) => `media:${m.id}:created`)].sort(),
      );
    });
  });
}
