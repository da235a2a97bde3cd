import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { queueMoveTask } from '../src/modules/storage-tasks/service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, get } from './support/http.js';

const FEED = '/api/v1/storage/tasks';
const ACK = '/api/v1/storage/tasks/ack';

for (const dialect of DIALECTS) {
  describe(`storage tasks [${dialect}]`, () => {
    let env: TestEnv;
    let key: string;
    let film: number;
    let other: number;

    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      film = (await make.production({ code: 'film' })).id;
      other = (await make.production({ code: 'other' })).id;
      await make.libraryFile(film, { path: 'plates/r1/sh010.exr' });
      const pix = await make.organisation(film, { name: 'Pixelworks Ltd' });
      await make.engagement(film, pix.id, { ref: 'eng-pix' });
      key = await env.mint({ production: 'film' });
    });
    after(() => env.close());

    const queue = (from: string, to: string, productionId = film) =>
      queueMoveTask(env.handle.db, { productionId, from, to, approvedBy: 'Ada Admin' });
    const ack = (body: unknown, token = key) => call(env.app, 'POST', ACK, { token, body });
    const livePaths = async () =>
      (
        await env.handle.db
          .selectFrom('library_files')
          .where('production_id', '=', film)
          .where('retired_at', 'is', null)
          .select('path')
          .orderBy('path')
          .execute()
      ).map((r) => r.path);

    it('refuses the feed without a key (401), without read AND write, or for a vendor key (403)', async () => {
      assert.equal((await get(env.app, FEED)).status, 401);
      const readOnly = await env.mint({ production: 'film', scopes: ['read'] });
      const writeOnly = await env.mint({ production: 'film', scopes: ['write'] });
      const r1 = await get(env.app, FEED, readOnly);
      assert.equal(r1.status, 403);
      assert.match(r1.body.detail, /"write"/);
      const r2 = await get(env.app, FEED, writeOnly);
      assert.equal(r2.status, 403);
      assert.match(r2.body.detail, /"read"/);
      const vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read', 'write'] });
      assert.equal((await get(env.app, FEED, vendor)).status, 403);
    });

    it('refuses an ack without a key (401), without write (403), with a bad body (422), for an unknown task (404)', async () => {
      const t = await queue('plates/r1/sh010.exr', 'plates/r1/never.exr');
      assert.equal((await call(env.app, 'POST', ACK, { body: { task_id: t.id, ok: true } })).status, 401);
      const readOnly = await env.mint({ production: 'film', scopes: ['read'] });
      assert.equal((await ack({ task_id: t.id, ok: true }, readOnly)).status, 403);
      const bad: Array<[unknown, RegExp]> = [
        [{ ok: true }, /^task_id: is required/],
        [{ task_id: 'x', ok: true }, /^task_id/],
        [{ task_id: 2 ** 31, ok: true }, /^task_id/],
        [{ task_id: 0, ok: true }, /^task_id/],
        [{ task_id: t.id }, /^ok: is required/],
        [{ task_id: t.id, ok: 'maybe' }, /^ok/],
        [{ task_id: t.id, ok: false, note: 'n'.repeat(2001) }, /^note/],
      ];
      for (const [body, detail] of bad) {
        const r = await ack(body);
        assert.equal(r.status, 422, JSON.stringify(body));
        assert.match(r.body.detail, detail);
      }
      const missing = await ack({ task_id: 999999, ok: true });
      assert.equal(missing.status, 404);
      // another production's task answers exactly like a missing one
      const foreign = await queue('a/b.exr', 'a/c.exr', other);
      const r = await ack({ task_id: foreign.id, ok: true });
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, missing.body);
      // nothing was settled by the refusals
      const feed = await get(env.app, FEED, key);
      assert.ok(feed.body.some((x: { id: number }) => x.id === t.id));
      await ack({ task_id: t.id, ok: false, note: 'cleanup' });
    });

    it('lists unsettled tasks oldest first, settles them once, renames the library row on success', async () => {
      const first = await queue('plates/r1/sh010.exr', 'plates/final/sh010.exr');
      const second = await queue('plates/r1/missing.exr', 'plates/final/missing.exr');
      const feed = await get(env.app, FEED, key);
      assert.equal(feed.status, 200);
      assert.deepEqual(
        feed.body.map((t: { id: number }) => t.id),
        [first.id, second.id],
      );
      const [t] = feed.body;
      assert.equal(t.op, 'move');
      assert.equal(t.from_path, 'plates/r1/sh010.exr');
      assert.equal(t.to_path, 'plates/final/sh010.exr');
      assert.equal(t.approved_by, 'Ada Admin');
      assert.equal(t.status, 'pending');
      assert.match(t.approved_at, /^\d{4}-\d{2}-\d{2}T/);

      const done = await ack({ task_id: first.id, ok: true, note: 'moved in 2s' });
      assert.equal(done.status, 200);
      assert.equal(done.body.ok, true);
      assert.equal(done.body.already_settled, false);
      assert.equal(done.body.task.status, 'done');
      assert.equal(done.body.task.note, 'moved in 2s');
      assert.match(done.body.task.settled_at, /^\d{4}-\d{2}-\d{2}T/);
      const paths = await livePaths();
      assert.ok(paths.includes('plates/final/sh010.exr'));
      assert.ok(!paths.includes('plates/r1/sh010.exr'));

      // re-ack, even with the opposite outcome: ok, and nothing changes
      const again = await ack({ task_id: first.id, ok: false, note: 'late retry' });
      assert.equal(again.status, 200);
      assert.equal(again.body.ok, true);
      assert.equal(again.body.already_settled, true);
      assert.deepEqual(again.body.task, done.body.task);

      const failed = await ack({ task_id: second.id, ok: false, note: 'source not found' });
      assert.equal(failed.body.task.status, 'failed');
      assert.equal(failed.body.task.note, 'source not found');
      assert.deepEqual((await get(env.app, FEED, key)).body, []);
      assert.deepEqual(await livePaths(), paths, 'a failed move leaves the library alone');

      const activity = await env.handle.db
        .selectFrom('activity')
        .where('production_id', '=', film)
        .where('verb', 'in', ['moved', 'move_failed'])
        .select(['verb', 'summary'])
        .orderBy('id')
        .execute();
      assert.deepEqual(activity.slice(-2), [
        {
          verb: 'moved',
          summary: 'Moved plates/r1/sh010.exr to plates/final/sh010.exr (approved by Ada Admin)',
        },
        {
          verb: 'move_failed',
          summary: 'Could not move plates/r1/missing.exr to plates/final/missing.exr: source not found',
        },
      ]);
    });

    it('concurrent acks of one task settle it once', async () => {
      const t = await queue('plates/final/sh010.exr', 'plates/r2/sh010.exr');
      const replies = await Promise.all([1, 2, 3].map(() => ack({ task_id: t.id, ok: true })));
      assert.ok(replies.every((r) => r.status === 200 && r.body.ok === true));
      assert.equal(replies.filter((r) => r.body.already_settled === false).length, 1);
      const paths = await livePaths();
      assert.ok(paths.includes('plates/r2/sh010.exr'));
      const moved = await env.handle.db
        .selectFrom('activity')
        .where('production_id', '=', film)
        .where('summary', 'like', 'Moved plates/final/sh010.exr%')
        .selectAll()
        .execute();
      assert.equal(moved.length, 1);
    });
  });
}
