import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { importRoundTrip, png, submit, type Refs } from './support/round-trip.js';
import { activitySince, changesSince, mark, nothingSince } from './support/write-trail.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const A = '/api/v1';

for (const dialect of DIALECTS) {
  describe(`reviewing a vendor's submission [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let desk: string;
    let ben: string;
    let wide: string;
    let pix: string;
    let hal: string;
    let colour = 0;
    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      desk = await env.mint({ production: 'film', scopes: ['admin'], label: 'Turnover desk' });
      ben = await env.mint({
        production: 'film',
        scopes: ['admin'],
        label: 'Review station',
        person: 'p-ben',
      });
      wide = await env.mint({ production: 'film', scopes: ['read'] });
      pix = await env.mint({
        production: 'film',
        engagement: 'eng-pix',
        scopes: ['read', 'submit:turnover'],
      });
      hal = await env.mint({
        production: 'film',
        engagement: 'eng-hal',
        scopes: ['read', 'submit:turnover'],
      });
    });
    after(() => env.close());

    /** A new submission by a vendor on a delivery; answers its id. */
    async function submitted(token = pix, delivery = refs['dl-plates']!, title = 'Comp v1'): Promise<number> {
      const r = await submit(env, token, delivery, [
        { name: 'title', value: title },
        {
          name: 'files',
          filename: 'comp.png',
          content: await png(`#${(++colour).toString(16).padStart(3, '0')}`),
        },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      return JSON.parse(r.body).id;
    }
    const review = (
      id: number,
      body: Record<string, unknown>,
      token = desk,
      headers: Record<string, string> = {},
    ) => call(env.app, 'POST', `${A}/admin/submissions/${id}/review`, { token, body, headers });
    const statusOf = async (delivery: number) =>
      (
        await env.handle.db
          .selectFrom('deliveries')
          .where('id', '=', delivery)
          .select('status')
          .executeTakeFirstOrThrow()
      ).status;
    const setStatus = (delivery: number, status: 'draft' | 'ready' | 'sent' | 'accepted') =>
      env.handle.db.updateTable('deliveries').set({ status }).where('id', '=', delivery).execute();

    it('asks for changes: the status becomes the decision, the review is on every list the vendor reads', async () => {
      const id = await submitted();
      const m = await mark(env);
      const r = await review(id, {
        decision: 'changes_requested',
        note: 'Edge matte chatters on frames 1012-1020',
        reviewed_by: 'ben okafor',
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.id, id);
      assert.equal(r.body.status, 'changes_requested');
      assert.deepEqual(r.body.review, {
        decision: 'changes_requested',
        note: 'Edge matte chatters on frames 1012-1020',
        reviewed_by: 'Ben Okafor',
        reviewed_at: r.body.review.reviewed_at,
      });
      assert.equal(r.body.media.length, 1);
      // the vendor's own list, the production's list and the delivery row say the same
      const mine = (await get(env.app, `${A}/submissions`, pix)).body.find((s: any) => s.id === id);
      assert.deepEqual(mine, r.body);
      const all = (await get(env.app, `${A}/submissions`, wide)).body.find((s: any) => s.id === id);
      assert.deepEqual(all, r.body);
      const row = (await get(env.app, `${A}/deliveries`, wide)).body.find(
        (d: any) => d.id === refs['dl-plates'],
      );
      assert.deepEqual(row.submissions.at(-1), r.body);
      assert.equal(row.submissions_total, row.submissions.length);
      assert.ok(row.updated_at >= r.body.review.reviewed_at, 'the delivery row changed with the review');
      // the see-as-vendor view shows it too
      const view = (await get(env.app, `${A}/admin/engagements/${refs['eng-pix']}/view`, desk)).body;
      const seen = view.submissions.find((s: any) => s.id === id);
      assert.equal(seen.status, 'changes_requested');
      assert.deepEqual(seen.review, r.body.review);
      // recorded: the submission changed (and nothing another vendor could see)
      assert.deepEqual(await changesSince(env, m), [`submission:${id}:updated`]);
      assert.deepEqual(await activitySince(env, m), [
        'requested changes: "Comp v1" from Pixelworks Ltd on turnover "Plates, reel 1", reviewed by Ben Okafor — Edge matte chatters on frames 1012-1020',
      ]);
      const stored = await env.handle.db
        .selectFrom('work_items')
        .where('id', '=', id)
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(stored.reviewed_by_person_id, refs['p-ben']);
    });

    it('a later review replaces the first; accept_delivery moves a sent delivery to accepted in the same write', async () => {
      const id = await submitted(hal, refs['dl-other'], 'Cape comp');
      await review(id, { decision: 'changes_requested', note: 'Cape edge' });
      await setStatus(refs['dl-other']!, 'sent');
      const m = await mark(env);
      const r = await review(id, { decision: 'accepted', note: '', accept_delivery: true });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.status, 'accepted');
      assert.deepEqual(r.body.review, {
        decision: 'accepted',
        note: '',
        reviewed_by: 'Turnover desk',
        reviewed_at: r.body.review.reviewed_at,
      });
      assert.equal(await statusOf(refs['dl-other']!), 'accepted');
      assert.deepEqual(await changesSince(env, m), [
        `delivery:${refs['dl-other']}:updated`,
        `submission:${id}:updated`,
      ]);
      assert.deepEqual(await activitySince(env, m), [
        'accepted: "Cape comp" from Halide FX on turnover "Cape comps", reviewed by Turnover desk',
        'accepted: delivery "Cape comps": sent → accepted',
      ]);
      // accepting again, delivery and all, changes the review only: the delivery is already accepted
      const again = await review(id, { decision: 'accepted', note: 'Final', accept_delivery: true });
      assert.equal(again.status, 200, again.text);
    });

    it('accepting a submission never accepts the delivery by itself; accept_delivery on a delivery not sent is 409', async () => {
      await setStatus(refs['dl-plates']!, 'sent');
      const id = await submitted();
      assert.equal((await review(id, { decision: 'accepted', note: 'ok' })).status, 200);
      assert.equal(await statusOf(refs['dl-plates']!), 'sent');

      const other = await submitted();
      for (const status of ['draft', 'ready'] as const) {
        await setStatus(refs['dl-plates']!, status);
        const m = await mark(env);
        const r = await review(other, { decision: 'accepted', note: 'ok', accept_delivery: true });
        assert.equal(r.status, 409, r.text);
        assert.equal(r.body.code, 'invalid_transition');
        assert.match(
          r.body.detail,
          new RegExp(
            `^accept_delivery: a ${status} delivery cannot become accepted; from ${status} it may become `,
          ),
        );
        assert.ok(await nothingSince(env, m), 'the review is not recorded either');
        const row = (await get(env.app, `${A}/submissions`, wide)).body.find((s: any) => s.id === other);
        assert.equal(row.status, 'submitted');
        assert.equal(row.review, null);
      }
      await setStatus(refs['dl-plates']!, 'sent');
    });

    it('a person-bound key reviews as its own person only', async () => {
      const id = await submitted();
      const self = await review(id, { decision: 'accepted', note: 'Good' }, ben);
      assert.equal(self.status, 200, self.text);
      assert.equal(self.body.review.reviewed_by, 'Ben Okafor');
      const byId = await review(
        id,
        { decision: 'accepted', note: 'Good', reviewed_by: String(refs['p-ben']) },
        ben,
      );
      assert.equal(byId.body.review.reviewed_by, 'Ben Okafor');
      const m = await mark(env);
      for (const named of ['Ana Ruiz', String(refs['p-ana'])]) {
        const r = await review(id, { decision: 'changes_requested', note: 'No', reviewed_by: named }, ben);
        assert.equal(r.status, 403, r.text);
        assert.equal(r.body.code, 'forbidden');
        assert.match(
          r.body.detail,
          /^this key reviews as Ben Okafor only; reviewed_by ".+" names someone else; nothing was recorded$/,
        );
      }
      assert.ok(await nothingSince(env, m));
    });

    it('refuses a bad review (404, 422) and records nothing', async () => {
      const id = await submitted();
      const m = await mark(env);
      const cases: Array<[number, Record<string, unknown>, number, string]> = [
        [999_999, { decision: 'accepted', note: '' }, 404, ''],
        [id, { decision: 'changes_requested', note: '   ' }, 422, 'note'],
        [id, { decision: 'changes_requested', note: 'x', accept_delivery: true }, 422, 'accept_delivery'],
        [id, { decision: 'accepted', note: '', reviewed_by: 'Nobody Here' }, 422, 'reviewed_by'],
        [id, { decision: 'maybe', note: '' }, 422, 'decision'],
        [id, { decision: 'accepted' }, 422, 'note'],
        [id, { decision: 'accepted', note: '', extra: true }, 422, 'extra'],
      ];
      for (const [target, body, status, field] of cases) {
        const r = await review(target, body);
        assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
        if (status === 404) assert.deepEqual(r.body, { detail: 'submission not found', code: 'not_found' });
        else assert.equal(r.body.field, field, r.text);
      }
      assert.ok(await nothingSince(env, m));
      // a submission on a retired delivery is unknown too
      const late = await submitted(hal, refs['dl-other'], 'Late cape');
      const retire = (at: string | null) =>
        env.handle.db
          .updateTable('deliveries')
          .set({ retired_at: at })
          .where('id', '=', refs['dl-other']!)
          .execute();
      await retire(new Date().toISOString());
      const m2 = await mark(env);
      const gone = await review(late, { decision: 'accepted', note: '' });
      await retire(null);
      assert.deepEqual(gone.body, { detail: 'submission not found', code: 'not_found' });
      assert.ok(await nothingSince(env, m2));
      // no admin scope, or a vendor key: 403
      assert.equal((await review(id, { decision: 'accepted', note: '' }, wide)).status, 403);
      assert.equal((await review(id, { decision: 'accepted', note: '' }, pix)).status, 403);
      assert.ok(await nothingSince(env, m2));
    });

    it('replays an Idempotency-Key and refuses it for another decision', async () => {
      const id = await submitted();
      const key = { 'idempotency-key': 'review-once' };
      const first = await review(id, { decision: 'accepted', note: 'Lovely' }, desk, key);
      assert.equal(first.status, 200);
      const m = await mark(env);
      const again = await review(id, { decision: 'accepted', note: 'Lovely' }, desk, key);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, first.body);
      assert.ok(await nothingSince(env, m));
      const other = await review(id, { decision: 'changes_requested', note: 'No' }, desk, key);
      assert.equal(other.body.code, 'idempotency_key_reused');
    });
  });
}
