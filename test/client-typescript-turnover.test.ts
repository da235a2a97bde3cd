import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  addDeliveryFiles,
  addOrganisation,
  ApiError,
  createClient,
  removeDeliveryFile,
  reviewSubmission,
  setDeliveryStatus,
  type ProdgraphClient,
  type TurnoverRow,
  type UploadProgress,
} from '../clients/typescript/src/index.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { ALL_SCOPES, importRoundTrip, png, type Refs } from './support/round-trip.js';

/*
 * The turnover's production side through the TypeScript client, against a real server on
 * SQLite and PostgreSQL: a new organisation, a package streamed up with progress, the delivery
 * sent, the vendor's view of it (package and its own submissions with their review), a review,
 * a file taken out, and the refusals as ApiError.
 */

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** `n` bytes made as they are read, 64 KiB at a time: a file the client never holds whole. */
function generated(n: number, seed: number): { stream: ReadableStream<Uint8Array>; sha: string } {
  const hash = createHash('sha256');
  const chunk = (i: number, size: number) => new Uint8Array(size).fill((seed + i) % 251);
  let made = 0;
  for (let i = 0; made < n; i++) {
    const size = Math.min(65_536, n - made);
    hash.update(chunk(i, size));
    made += size;
  }
  let i = 0;
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= n) return controller.close();
      const size = Math.min(65_536, n - sent);
      controller.enqueue(chunk(i++, size));
      sent += size;
    },
  });
  return { stream, sha: hash.digest('hex') };
}

for (const dialect of DIALECTS) {
  describe(`TypeScript client: the turnover, production side [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let admin: ProdgraphClient;
    let vendor: ProdgraphClient;
    let plates: number;

    before(async () => {
      env = await createEnv(dialect);
      refs = await importRoundTrip(env, 'film');
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      const baseUrl = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
      admin = createClient({ baseUrl, key: await env.mint({ production: 'film', scopes: ['admin'] }) });
      vendor = createClient({
        baseUrl,
        key: await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' }),
      });
      plates = refs['dl-plates']!;
    });
    after(() => env.close());

    it('adds an organisation once, whatever the retries; the same name again is a 409 ApiError', async () => {
      const org = await addOrganisation(admin, { name: 'Brand New VFX Co' }, { idempotencyKey: 'org-1' });
      assert.equal(org.name, 'Brand New VFX Co');
      assert.equal(typeof org.ref, 'string');
      const replay = await addOrganisation(admin, { name: 'Brand New VFX Co' }, { idempotencyKey: 'org-1' });
      assert.equal(replay.id, org.id);
      const again = await addOrganisation(admin, { name: 'brand new vfx co' }).catch((e: unknown) => e);
      assert.ok(again instanceof ApiError);
      assert.equal(again.status, 409);
      // the organisation can be engaged at once
      const engaged = await admin.POST('/api/v1/admin/engagements', {
        body: { ref: 'eng-brand-new', organisation_id: org.id },
      });
      assert.equal(engaged.response.status, 201);
    });

    it('streams a package up (a File, a stream of known size, an async iterable), with progress', async () => {
      const still = await png('#468');
      const big = generated(3 * 1024 * 1024 + 17, 3);
      const edl = new TextEncoder().encode('TITLE: REEL 1\nFCM: NON-DROP FRAME\n');
      const progress: UploadProgress[] = [];
      const upload = await addDeliveryFiles(
        admin,
        plates,
        [
          new File([still], 'ref.png', { type: 'image/png' }),
          { name: 'plate_sh010.exr', data: big.stream, size: 3 * 1024 * 1024 + 17, label: 'sh010 plate' },
          {
            name: 'reel1.edl',
            data: (async function* () {
              yield edl.subarray(0, 10);
              yield edl.subarray(10);
            })(),
          },
        ],
        { onProgress: (p) => progress.push(p) },
      );
      assert.equal(upload.delivery_id, plates);
      assert.deepEqual(
        upload.files.map((f) => [f.label, f.size, f.sha256]),
        [
          ['ref.png', still.length, sha256(still)],
          ['sh010 plate', 3 * 1024 * 1024 + 17, big.sha],
          ['reel1.edl', edl.length, sha256(edl)],
        ],
      );
      assert.equal(upload.files[0]!.kind, 'image');
      // progress follows the bytes as they go; no total while a size is unknown
      assert.ok(progress.length >= 40, `${progress.length} progress reports`);
      assert.ok(progress.every((p, i) => i === 0 || p.sent >= progress[i - 1]!.sent));
      assert.equal(progress.at(-1)!.sent, still.length + 3 * 1024 * 1024 + 17 + edl.length);
      assert.ok(progress.every((p) => p.total === undefined));
      // with every size known, a total
      const known: UploadProgress[] = [];
      await addDeliveryFiles(admin, plates, [new File([edl], 'notes.txt')], {
        onProgress: (p) => known.push(p),
      });
      assert.deepEqual(known.at(-1), { sent: edl.length, total: edl.length });
    });

    it('moves the delivery by its transitions; a vendor then sees the package and its own submissions', async () => {
      const wrong = await setDeliveryStatus(admin, plates, 'accepted').catch((e: unknown) => e);
      assert.ok(wrong instanceof ApiError);
      assert.equal(wrong.status, 409);
      assert.equal(wrong.code, 'invalid_transition');
      const sent = await setDeliveryStatus(admin, plates, 'sent', { note: 'Plates out' });
      assert.equal(sent.status, 'sent');
      const rows = (await vendor.GET('/api/v1/turnovers')).data!;
      const row: TurnoverRow = rows.find((r) => r.id === plates)!;
      assert.deepEqual(
        row.package.map((f) => f.label),
        ['ref.png', 'sh010 plate', 'reel1.edl', 'notes.txt'],
      );
      assert.deepEqual(row.submissions, []);
    });

    it('reviews a submission: the vendor reads the decision and the note on its turnover', async () => {
      const submitted = await vendor.POST('/api/v1/turnovers/{id}/submissions', {
        params: { path: { id: plates } },
        body: { files: [new File([await png('#864')], 'sh010_comp_v001.png')], title: 'Comp v1' },
      });
      assert.equal(submitted.response.status, 200);
      const reviewed = await reviewSubmission(admin, submitted.data!.id, {
        decision: 'changes_requested',
        note: 'Edge matte chatters on frames 1012-1020',
      });
      assert.equal(reviewed.status, 'changes_requested');
      assert.equal(reviewed.review!.note, 'Edge matte chatters on frames 1012-1020');
      const row = (await vendor.GET('/api/v1/turnovers')).data!.find((r) => r.id === plates)!;
      const own = row.submissions.find((s) => s.id === submitted.data!.id)!;
      assert.equal(own.status, 'changes_requested');
      assert.equal(own.review!.decision, 'changes_requested');
      const blank = await reviewSubmission(admin, submitted.data!.id, {
        decision: 'changes_requested',
        note: ' ',
      }).catch((e: unknown) => e);
      assert.ok(blank instanceof ApiError);
      assert.equal(blank.status, 422);
      assert.equal(blank.field, 'note');
    });

    it('takes a file out of the package: the vendor no longer sees it', async () => {
      const before = (await vendor.GET('/api/v1/turnovers')).data!.find((r) => r.id === plates)!;
      const notes = before.package.find((f) => f.label === 'notes.txt')!;
      const left = await removeDeliveryFile(admin, plates, notes.id);
      assert.ok(!left.files.some((f) => f.id === notes.id));
      const after = (await vendor.GET('/api/v1/turnovers')).data!.find((r) => r.id === plates)!;
      assert.deepEqual(
        after.package.map((f) => f.label),
        ['ref.png', 'sh010 plate', 'reel1.edl'],
      );
      const gone = await vendor.GET('/api/v1/media/{id}', { params: { path: { id: notes.id } } });
      assert.equal(gone.response.status, 404);
    });
  });
}
