import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { nowIso } from '../src/db/values.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { ALL_SCOPES, importRoundTrip, png, submit, type Refs } from './support/round-trip.js';
import {
  DESK,
  addPackageFile,
  grantDelivery,
  removePackageFile,
  reviewSubmission,
  setDeliveryStatus,
  setGrantExpiry,
} from './support/turnover-admin.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * The vendor side of a turnover: GET /turnovers rows carry the delivery's package (once sent)
 * and the engagement's own submissions with their reviews, answer with an ETag per view, and
 * the package's files are fetchable by exactly the engagements granted on the delivery.
 */

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** An instant strictly after every write committed so far and before any write that follows. */
function instantBetween(): string {
  const at = nowIso();
  while (nowIso() === at) {
    // the stamps are milliseconds: wait for the clock to move past `at`, so the next write is after it
  }
  return at;
}

for (const dialect of DIALECTS) {
  describe(`vendor turnovers: package, own submissions, reviews [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let pix: string;
    let read: string;
    let hal: string;
    let wide: string;
    let plates: number;
    const files: Record<string, { id: number; sha256: string; size: number; content_type: string }> = {};
    const bytes: Record<string, Buffer> = {};
    let mine: number;
    let halWork: number;

    const row = async (token: string, id = plates) => {
      const r = await get(env.app, '/api/v1/turnovers', token);
      assert.equal(r.status, 200, r.text);
      return r.body.find((t: any) => t.id === id);
    };

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      plates = refs['dl-plates']!;
      pix = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      read = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-read' });
      hal = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-hal' });
      wide = await env.mint({ production: 'film', scopes: ALL_SCOPES });
      bytes.plate = await png('#123', 64);
      bytes.edl = Buffer.from('TITLE: reel 1\n001  A001 V C 01:00:00:00 01:00:04:00\n');
      files.plate = await addPackageFile(env, plates, 'sh010_plate.png', bytes.plate);
      files.edl = await addPackageFile(env, plates, 'reel1.edl', bytes.edl);
    });
    after(() => env.close());

    it('a package being prepared stays private: [] until the delivery is sent, its files 404', async () => {
      for (const token of [pix, read]) {
        const r = await row(token);
        assert.equal(r.status, 'ready');
        assert.deepEqual(r.package, []);
        assert.deepEqual(r.submissions, []);
        for (const f of Object.values(files)) {
          assert.equal((await get(env.app, `/api/v1/media/${f.id}`, token)).status, 404);
        }
      }
    });

    it('once sent, every engagement granted on the delivery sees the package and fetches its bytes', async () => {
      await setDeliveryStatus(env, plates, 'sent');
      for (const token of [pix, read]) {
        const r = await row(token);
        assert.equal(r.status, 'sent');
        assert.deepEqual(r.package, [
          {
            id: files.plate!.id,
            label: 'sh010_plate.png',
            kind: 'image',
            content_type: 'image/png',
            size: bytes.plate!.length,
            sha256: sha256(bytes.plate!),
          },
          {
            id: files.edl!.id,
            label: 'reel1.edl',
            kind: files.edl!.content_type.startsWith('text/') ? 'document' : 'file',
            content_type: files.edl!.content_type,
            size: bytes.edl!.length,
            sha256: sha256(bytes.edl!),
          },
        ]);
        for (const [name, f] of Object.entries(files)) {
          const meta = await get(env.app, `/api/v1/media/${f.id}`, token);
          assert.equal(meta.status, 200);
          assert.equal(meta.body.delivery_id, plates);
          assert.equal(meta.body.work_item_id, null);
          const content = await env.app.inject({
            url: `/api/v1/media/${f.id}/content`,
            headers: { authorization: `Bearer ${token}` },
          });
          assert.equal(content.statusCode, 200);
          assert.equal(sha256(content.rawPayload), sha256(bytes[name]!));
        }
      }
      // another vendor, granted elsewhere: neither in its list nor fetchable
      assert.equal(await row(hal), undefined);
      assert.equal((await get(env.app, `/api/v1/media/${files.plate!.id}`, hal)).status, 404);
    });

    it("a vendor's row lists its own submissions, never another engagement's", async () => {
      const comp = await png('#f0f', 16);
      const r = await submit(env, pix, plates, [
        { name: 'title', value: 'sh010 comp v1' },
        { name: 'note', value: 'first pass' },
        { name: 'files', filename: 'sh010_comp.png', content: comp },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      const made = JSON.parse(r.body);
      mine = made.id;
      const h = await submit(env, hal, refs['dl-other']!, [
        { name: 'files', filename: 'cape.png', content: await png('#0ff', 16) },
      ]);
      assert.equal(h.statusCode, 200, h.body);
      halWork = JSON.parse(h.body).id;
      const own = await row(pix);
      assert.deepEqual(own.submissions, [
        {
          id: mine,
          status: 'submitted',
          title: 'sh010 comp v1',
          created_at: made.created_at,
          media: [
            {
              id: made.media[0].id,
              label: 'sh010_comp.png',
              kind: 'image',
              content_type: 'image/png',
              size: comp.length,
              sha256: sha256(comp),
            },
          ],
          review: null,
        },
      ]);
      // the read-only engagement on the same delivery sees the package but not pix's work
      const other = await row(read);
      assert.deepEqual(other.submissions, []);
      assert.equal(other.package.length, 2);
      assert.equal((await get(env.app, `/api/v1/media/${made.media[0].id}`, read)).status, 404);
      const halRow = await row(hal, refs['dl-other']);
      assert.deepEqual(
        halRow.submissions.map((s: any) => s.id),
        [halWork],
      );
      assert.deepEqual(halRow.package, [], 'a draft delivery shows no package');
    });

    it('a review shows on the vendor’s own row with its note, reviewer and time', async () => {
      await reviewSubmission(env, mine, 'changes_requested', 'Edge matte chatters on 1012-1020');
      const own = (await row(pix)).submissions[0];
      assert.equal(own.status, 'changes_requested');
      assert.equal(own.review.decision, 'changes_requested');
      assert.equal(own.review.note, 'Edge matte chatters on 1012-1020');
      assert.equal(own.review.reviewed_by, DESK, "the reviewing key's label (it names no person)");
      assert.match(own.review.reviewed_at, /Z$/);
      const listed = await get(env.app, '/api/v1/submissions', pix);
      assert.deepEqual(listed.body.find((s: any) => s.id === mine).review, own.review);
    });

    it('updated_since: a package file or a review of its own work counts as a change of the row, for that view only', async () => {
      let since = instantBetween();
      const changed = async (token: string) =>
        (await get(env.app, `/api/v1/turnovers?updated_since=${since}`, token)).body.map((t: any) => t.id);
      assert.deepEqual(await changed(pix), []);
      assert.deepEqual(await changed(read), []);
      // a review of pix's work: pix's row changed, the read-only vendor's did not
      await reviewSubmission(env, mine, 'accepted', 'Approved for the cut');
      assert.deepEqual(await changed(pix), [plates]);
      assert.deepEqual(await changed(read), []);
      assert.deepEqual(await changed(hal), []);
      const stamped = (await row(pix)).updated_at;
      assert.ok(stamped > since, `the row's updated_at moves with the review (${stamped} > ${since})`);
      // a file added to the sent package: a change for every engagement shown it
      since = instantBetween();
      files.lut = await addPackageFile(env, plates, 'show.cube', Buffer.from('LUT_3D_SIZE 2\n0 0 0\n'));
      assert.deepEqual(await changed(pix), [plates]);
      assert.deepEqual(await changed(read), [plates]);
      assert.deepEqual(await changed(hal), []);
      // a file taken out of it: a change too, and the file leaves the package
      since = instantBetween();
      await removePackageFile(env, files.edl!.id);
      assert.deepEqual(await changed(read), [plates]);
      assert.deepEqual(
        (await row(read)).package.map((f: any) => f.label),
        ['sh010_plate.png', 'show.cube'],
      );
      // a file added to a draft package: its delivery's row may move, its package stays private
      since = instantBetween();
      await addPackageFile(env, refs['dl-other']!, 'cape_ref.png', await png('#333', 8));
      const draft = (await get(env.app, `/api/v1/turnovers?updated_since=${since}`, hal)).body;
      assert.ok(draft.every((t: any) => t.package.length === 0));
    });

    it('a removed file and a recalled package answer 404 exactly as a missing id', async () => {
      const ask = async (id: number, token: string, suffix = '') => {
        env.queries.count = 0;
        env.queries.sql.length = 0;
        const r = await env.app.inject({
          url: `/api/v1/media/${id}${suffix}`,
          headers: { authorization: `Bearer ${token}` },
        });
        const headers = Object.fromEntries(
          Object.entries(r.headers).filter(([h]) => h !== 'date' && h !== 'x-request-id'),
        );
        // the auth hook's once-a-minute last_used_at write may fall on either request
        const sql = env.queries.sql.filter((q) => !/set "last_used_at"/.test(q));
        return { status: r.statusCode, body: r.body, headers, sql };
      };
      const maxId = await env.handle.db
        .selectFrom('media')
        .select((eb) => eb.fn.max('id').as('m'))
        .executeTakeFirstOrThrow();
      const missingId = Number(maxId.m) + 1000;
      const draftFile = await addPackageFile(env, refs['dl-other']!, 'draft.png', await png('#444', 8));
      for (const suffix of ['', '/content']) {
        for (const token of [pix, read, hal]) {
          // the first ask after a write reads the door afresh; compare answers behind a warm one
          await ask(missingId, token, suffix);
          const missing = await ask(missingId, token, suffix);
          assert.equal(missing.status, 404);
          // removed from pix's package; another delivery's package; a draft package (hal's own delivery)
          for (const id of [files.edl!.id, files.plate!.id, draftFile.id]) {
            if (token !== hal && id === files.plate!.id) continue; // shown to pix and read
            const r = await ask(id, token, suffix);
            assert.deepEqual(
              r,
              missing,
              `media ${id}${suffix} to ${token === hal ? 'hal' : 'a plates vendor'}`,
            );
          }
        }
      }
      // recalled: sent → ready hides the package again, rows and bytes alike
      await setDeliveryStatus(env, plates, 'ready');
      assert.deepEqual((await row(pix)).package, []);
      await ask(missingId, read, '/content');
      const missing = await ask(missingId, read, '/content');
      assert.deepEqual(await ask(files.plate!.id, read, '/content'), missing);
      await setDeliveryStatus(env, plates, 'sent');
      assert.equal((await ask(files.plate!.id, read, '/content')).status, 200);
      // a production-wide key still reads the removed file: it is kept for history
      assert.equal((await get(env.app, `/api/v1/media/${files.edl!.id}`, wide)).status, 200);
    });

    it('a production-wide key lists no turnovers, package or not', async () => {
      const r = await get(env.app, '/api/v1/turnovers', wide);
      assert.deepEqual(r.body, []);
    });

    it('a page of turnovers costs the same statements with one delivery or several', async () => {
      const count = async () => {
        // warm: the first request after a write reads the key's revision and door afresh
        await get(env.app, '/api/v1/turnovers?limit=50', pix);
        const start = env.queries.sql.length;
        const r = await get(env.app, '/api/v1/turnovers?limit=50', pix);
        assert.equal(r.status, 200);
        // leaving out the auth hook's fire-and-forget, once-a-minute last_used_at write
        const n = env.queries.sql.slice(start).filter((q) => !/set "last_used_at"/.test(q)).length;
        return { n, rows: r.body.length };
      };
      const one = await count();
      assert.equal(one.rows, 1);
      // grant pix the other delivery too, and send it with a package and work of its own on it
      await grantDelivery(env, refs['eng-pix']!, refs['dl-other']!, 'submit');
      await setDeliveryStatus(env, refs['dl-other']!, 'ready');
      await setDeliveryStatus(env, refs['dl-other']!, 'sent');
      const r = await submit(env, pix, refs['dl-other']!, [
        { name: 'files', filename: 'x.png', content: await png('#555', 8) },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      const two = await count();
      assert.equal(two.rows, 2);
      assert.equal(two.n, one.n, 'the same statements whatever the number of rows');
      const other = (await get(env.app, '/api/v1/turnovers', pix)).body.find(
        (t: any) => t.id === refs['dl-other'],
      );
      assert.equal(other.package.length, 2, "the other delivery's package, now sent");
      assert.deepEqual(
        other.submissions.map((s: any) => s.id),
        [JSON.parse(r.body).id],
        "pix's own work there, never hal's",
      );
    });

    it('GET /turnovers answers an ETag per view and 304 until something that view sees changes', async () => {
      const tagOf = async (token: string, query = '') => {
        const r = await get(env.app, `/api/v1/turnovers${query}`, token);
        assert.equal(r.status, 200);
        assert.match(String(r.headers.etag), /^"[A-Za-z0-9_-]+"$/);
        return String(r.headers.etag);
      };
      const notModified = async (token: string, etag: string, query = '') =>
        (
          await call(env.app, 'GET', `/api/v1/turnovers${query}`, {
            token,
            headers: { 'if-none-match': etag },
          })
        ).status === 304;
      for (const query of ['', '?limit=10']) {
        const pixTag = await tagOf(pix, query);
        const readTag = await tagOf(read, query);
        assert.notEqual(pixTag, readTag, 'two views, two tags');
        assert.ok(await notModified(pix, pixTag, query));
        assert.ok(await notModified(read, readTag, query));
        assert.ok(!(await notModified(read, pixTag, query)), "one view's tag never matches another's");
        // another engagement's work changes nothing for pix or read
        await reviewSubmission(env, halWork, 'changes_requested', `again ${query}`);
        assert.ok(await notModified(pix, pixTag, query));
        assert.ok(await notModified(read, readTag, query));
        // a review of pix's work: a new tag for pix only
        await reviewSubmission(env, mine, 'changes_requested', `redo ${query}`);
        assert.ok(!(await notModified(pix, pixTag, query)));
        assert.ok(await notModified(read, readTag, query));
        // a package file: a new tag for both
        const f = await addPackageFile(
          env,
          plates,
          `extra${query ? '-paged' : ''}.txt`,
          Buffer.from(`extra ${query}\n`),
        );
        assert.ok(!(await notModified(read, readTag, query)));
        await removePackageFile(env, f.id);
      }
    });

    it('the ETag moves with the reach: a grant that expires', async () => {
      const grant = await env.handle.db
        .selectFrom('grants')
        .where('engagement_id', '=', refs['eng-read']!)
        .where('kind', '=', 'delivery')
        .select('id')
        .executeTakeFirstOrThrow();
      // the grant lapses in a moment (long enough for the two requests before it on a loaded
      // machine): the list (and its tag) change once it has, with no write in between
      const lapses = new Date(Date.now() + 2000).toISOString();
      await setGrantExpiry(env, grant.id, lapses);
      const live = await get(env.app, '/api/v1/turnovers', read);
      assert.equal(live.body.length, 1);
      const before = String(live.headers.etag);
      const again = await call(env.app, 'GET', '/api/v1/turnovers', {
        token: read,
        headers: { 'if-none-match': before },
      });
      assert.equal(again.status, 304, 'nothing moved yet');
      // the expiry is judged by each request's clock: the event waited on is its passing
      // (a timer runs on the monotonic clock from the loop's cached time, so it may fire a
      // moment before the wall clock reads past the instant: wait again until it does)
      const lapsesAt = Date.parse(lapses);
      while (Date.now() <= lapsesAt) {
        await new Promise<void>((resolve) => setTimeout(resolve, lapsesAt - Date.now() + 1));
      }
      const lapsed = await call(env.app, 'GET', '/api/v1/turnovers', {
        token: read,
        headers: { 'if-none-match': before },
      });
      assert.equal(lapsed.status, 200);
      assert.deepEqual(lapsed.body, []);
      assert.notEqual(lapsed.headers.etag, before);
      assert.equal(
        (await get(env.app, `/api/v1/media/${files.plate!.id}`, read)).status,
        404,
        'nor its package',
      );
    });
  });
}
