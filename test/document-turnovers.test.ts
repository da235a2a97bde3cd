import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { exportDocument, type Exported } from '../src/document/export.js';
import { DocumentError } from '../src/document/parse.js';
import type { ProductionDocument } from '../src/document/schema.js';
import { summarise } from '../src/document/sync/plan.js';
import { cliTargets, prodgraphHere } from './support/cli.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { get } from './support/http.js';
import { png, submit } from './support/round-trip.js';
import { smallProduction } from './support/fixtures.js';
import { importDoc, moved } from './support/sync.js';
import { jpeg } from './support/write.js';

/*
 * The turnover in the production document: a delivery's package (`deliveries[].files`) and
 * the work engagements submitted on deliveries with the production's review
 * (`engagements[].submissions`). A season round-trips: export → import into an empty database
 * → export gives the same document and the same files; a sync takes a file out of a package
 * without deleting it; a bad reference is refused and changes nothing.
 */

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** The files the turnover document names, written into `dir`. */
async function writeFiles(dir: string): Promise<void> {
  const files: Array<[string, Buffer]> = [
    ['plates/sh010.exr', Buffer.from('EXR plate sh010 '.repeat(64))],
    ['plates/sh020.exr', Buffer.from('EXR plate sh020 '.repeat(64))],
    ['luts/show.cube', Buffer.from('TITLE "show"\nLUT_3D_SIZE 2\n')],
    ['work/comp-v1.jpg', await jpeg(11)],
    ['work/comp-v2.jpg', await jpeg(12)],
    ['work/roto.png', await png('#246')],
    ['work/roto-notes.txt', Buffer.from('Roto for sh010, frames 1001-1040\n')],
  ];
  for (const [rel, bytes] of files) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), bytes);
  }
}

/**
 * A production whose plates delivery has a package of three files, and two engagements with
 * work on it: one accepted, one with changes requested, one not reviewed yet.
 */
function turnoverDoc(code: string): ProductionDocument {
  const doc = smallProduction(code);
  const plates = doc.deliveries!.find((d) => d.ref === 'dl-plates')!;
  plates.status = 'sent';
  plates.sent_at = '2026-03-10T09:00:00Z';
  plates.files = [
    { media: 'plates/sh010.exr', label: 'sh010_plate.exr' },
    { media: 'plates/sh020.exr', label: 'sh020_plate.exr' },
    { media: 'luts/show.cube' },
  ];
  const hal = doc.engagements!.find((e) => e.ref === 'eng-hal')!;
  hal.grants = [...(hal.grants ?? []), { kind: 'delivery', delivery: 'dl-plates', access: 'submit' }];
  doc.submissions = [
    {
      delivery: 'dl-plates',
      engagement: 'eng-pix',
      title: 'sh010 comp v1',
      note: 'First pass',
      created_by: 'Pixelworks pipeline',
      created_at: '2026-03-12T10:00:00Z',
      files: [{ media: 'work/comp-v1.jpg', label: 'sh010_comp_v1.jpg' }],
      review: {
        decision: 'changes_requested',
        note: 'Edge matte chatters on 1012-1020',
        reviewed_by: 'p-ben',
        reviewed_at: '2026-03-13T09:30:00Z',
      },
    },
    {
      delivery: 'dl-plates',
      engagement: 'eng-pix',
      title: 'sh010 comp v2',
      note: '',
      created_by: 'Pixelworks pipeline',
      created_at: '2026-03-14T10:00:00Z',
      files: [{ media: 'work/comp-v2.jpg', label: 'sh010_comp_v2.jpg' }],
      review: {
        decision: 'accepted',
        note: 'Lovely',
        reviewed_by: 'The client',
        reviewed_at: '2026-03-15T08:00:00Z',
      },
    },
    {
      delivery: 'dl-plates',
      engagement: 'eng-hal',
      title: 'sh010 roto',
      created_at: '2026-03-12T16:00:00Z',
      files: [{ media: 'work/roto.png' }, { media: 'work/roto-notes.txt', label: 'notes.txt' }],
    },
  ];
  return doc;
}

/** Writes an export (document and media) into a folder of its own, as the CLI does. */
async function writeExport(env: TestEnv, exported: Exported, dir: string): Promise<void> {
  for (const f of exported.files) {
    await mkdir(dirname(join(dir, f.rel)), { recursive: true });
    await copyFile(env.store.resolveKey(f.storageKey)!, join(dir, f.rel));
  }
  await writeFile(join(dir, 'production.json'), JSON.stringify(exported.doc));
}

/** The package rows of a delivery, taken out or not, in the order they arrived. */
const packageRows = (env: TestEnv, deliveryId: number) =>
  env.handle.db
    .selectFrom('media')
    .where('delivery_id', '=', deliveryId)
    .where('work_item_id', 'is', null)
    .select(['id', 'label', 'removed_at', 'sha256'])
    .orderBy('id')
    .execute();

interface SubmissionAnswer {
  id: number;
  delivery_id: number;
  engagement_id: number;
  status: string;
  title: string;
  note: string;
  media: Array<{ id: number; label: string; sha256: string }>;
  created_at: string;
  review: { decision: string; note: string; reviewed_by: string | null; reviewed_at: string } | null;
}

for (const dialect of DIALECTS) {
  describe(`the turnover in the production document [${dialect}]`, () => {
    let env: TestEnv;
    let dir: string;
    let n = 0;
    const code = () => `turnover-${++n}`;
    before(async () => {
      env = await createEnv(dialect);
      dir = await mkdtemp(join(env.dir, 'turnover-doc-'));
      await writeFiles(dir);
    });
    after(() => env.close());

    it('a season round-trips: package, submissions and reviews export, import into an empty database and export the same', async () => {
      const doc = turnoverDoc(code());
      const first = await importDoc(env, doc, dir, false);
      assert.deepEqual(
        [first.plan.counts.package_files?.created, first.plan.counts.submissions?.created],
        [3, 3],
      );
      const production = doc.production.code;
      // work sent through the API since: a vendor submits on the turnover
      const vendor = await env.mint({
        production,
        engagement: 'eng-pix',
        scopes: ['read', 'submit:turnover'],
      });
      const sent = await submit(env, vendor, first.refs['dl-plates']!, [
        { name: 'title', value: 'sh010 comp v3' },
        { name: 'files', filename: 'sh010_comp_v3.jpg', content: await jpeg(13), contentType: 'image/jpeg' },
      ]);
      assert.equal(sent.statusCode, 200, sent.body);
      // and a sync takes sh020 out of the package
      const next = clone(doc);
      next.deliveries![0]!.files = next.deliveries![0]!.files!.filter((f) => f.media !== 'plates/sh020.exr');
      const synced = await importDoc(env, next, dir);
      assert.deepEqual(moved(synced.plan), { deliveries: { updated: 1 }, package_files: { retired: 1 } });

      const exported = (await exportDocument(env.handle.db, production))!;
      const plates = exported.doc.deliveries!.find((d) => d.ref === 'dl-plates')!;
      assert.deepEqual(
        plates.files!.map((f) => f.label),
        ['sh010_plate.exr', 'show.cube'],
        'the current package, the file taken out left out',
      );
      assert.deepEqual(
        exported.doc.submissions!.map((s) => [
          s.engagement,
          s.title,
          s.review?.decision ?? null,
          s.review?.reviewed_by ?? null,
          s.files!.map((f) => f.label),
        ]),
        [
          ['eng-pix', 'sh010 comp v1', 'changes_requested', 'p-ben', ['sh010_comp_v1.jpg']],
          ['eng-pix', 'sh010 comp v2', 'accepted', 'The client', ['sh010_comp_v2.jpg']],
          ['eng-hal', 'sh010 roto', null, null, ['roto.png', 'notes.txt']],
          ['eng-pix', 'sh010 comp v3', null, null, ['sh010_comp_v3.jpg']],
        ],
        'every submission in the order it arrived, the one sent through the API included',
      );

      const target = await createEnv(dialect);
      try {
        const out = await mkdtemp(join(env.dir, 'turnover-export-'));
        await writeExport(env, exported, out);
        const moved_ = await importDoc(target, exported.doc, out, false);
        assert.deepEqual(
          [moved_.plan.counts.package_files?.created, moved_.plan.counts.submissions?.created],
          [2, 4],
        );
        const again = (await exportDocument(target.handle.db, production))!;
        assert.deepEqual(again.doc, exported.doc, 'the export of the copy is the export of the original');
        assert.deepEqual(
          again.files.map((f) => f.rel).sort(),
          exported.files.map((f) => f.rel).sort(),
          'the same files beside it',
        );

        // what a user sees of it through the API: the submissions with their files and reviews
        const listOf = async (e: TestEnv) =>
          (await get(e.app, '/api/v1/submissions', await e.mint({ production }))).body as SubmissionAnswer[];
        const shape = (list: SubmissionAnswer[]) =>
          list.map((s) => ({
            status: s.status,
            title: s.title,
            note: s.note,
            created_at: s.created_at,
            review: s.review,
            files: s.media.map((m) => [m.label, m.sha256]),
          }));
        const original = await listOf(env);
        assert.equal(original.length, 4);
        assert.deepEqual(shape(await listOf(target)), shape(original));
        assert.deepEqual(original[0]!.review, {
          decision: 'changes_requested',
          note: 'Edge matte chatters on 1012-1020',
          reviewed_by: 'Ben Okafor',
          reviewed_at: '2026-03-13T09:30:00.000Z',
        });

        // each synced with the export changes nothing: the original (whose submission came
        // through the API) and the copy
        for (const e of [env, target]) {
          const unchanged = await importDoc(e, again.doc, out);
          assert.equal(summarise(unchanged.plan), 'no changes', JSON.stringify(unchanged.plan.changes));
        }
      } finally {
        await target.close();
      }
    });

    it('a sync takes a file out of the package, keeping its media object, and puts it back under the same id', async () => {
      const doc = turnoverDoc(code());
      const { refs } = await importDoc(env, doc, dir, false);
      const production = doc.production.code;
      const token = await env.mint({ production });
      const delivery = refs['dl-plates']!;
      const [, sh020] = await packageRows(env, delivery);
      const feed = await get(env.app, '/api/v1/changes?after=now', token);
      const cursor = (feed.body as { next_cursor: string }).next_cursor;

      const out = clone(doc);
      out.deliveries![0]!.files!.splice(1, 1);
      const taken = await importDoc(env, out, dir);
      assert.deepEqual(
        taken.plan.changes.map((c) => [c.kind, c.action, c.key, c.id, c.fields ?? c.reason]),
        [
          ['deliveries', 'updated', 'dl-plates', delivery, ['files']],
          [
            'package_files',
            'retired',
            'dl-plates/sh020_plate.exr',
            sh020!.id,
            'taken out of the package; the media object is kept',
          ],
        ],
      );
      const rows = await packageRows(env, delivery);
      assert.equal(rows.length, 3, 'no media row is deleted');
      assert.ok(rows[1]!.removed_at, 'sh020 is out of the package');
      assert.deepEqual([rows[0]!.removed_at, rows[2]!.removed_at], [null, null]);
      assert.equal(
        (await get(env.app, `/api/v1/media/${sh020!.id}`, token)).status,
        200,
        'the object is kept',
      );
      const changes = (
        (await get(env.app, `/api/v1/changes?after=${cursor}`, token)).body as {
          changes: Array<{ kind: string; id: number; op: string }>;
        }
      ).changes.map((c) => [c.kind, c.id, c.op]);
      assert.deepEqual(
        changes.filter(([kind]) => kind !== 'production'),
        [
          ['media', sh020!.id, 'updated'],
          ['delivery', delivery, 'updated'],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );

      // a delivery that lists no files says nothing about its package
      const silent = clone(out);
      delete silent.deliveries![0]!.files;
      assert.equal(summarise((await importDoc(env, silent, dir)).plan), 'no changes');

      // listed again (under a new name), the same media object is back in the package
      const back = clone(doc);
      back.deliveries![0]!.files![1]!.label = 'sh020_plate_v2.exr';
      const restored = await importDoc(env, back, dir);
      assert.deepEqual(
        restored.plan.changes.map((c) => [c.kind, c.action, c.id, c.fields]),
        [
          ['deliveries', 'updated', delivery, ['files']],
          ['package_files', 'updated', sh020!.id, ['label', 'removed_at']],
        ],
      );
      const now = await packageRows(env, delivery);
      assert.deepEqual(
        now.map((r) => [r.id, r.label, r.removed_at]),
        [
          [rows[0]!.id, 'sh010_plate.exr', null],
          [sh020!.id, 'sh020_plate_v2.exr', null],
          [rows[2]!.id, 'show.cube', null],
        ],
      );

      // an empty list empties the package; new bytes are a new media object
      const emptied = clone(doc);
      emptied.deliveries![0]!.files = [];
      assert.deepEqual(moved((await importDoc(env, emptied, dir)).plan), {
        deliveries: { updated: 1 },
        package_files: { retired: 3 },
      });
      const fresh = clone(doc);
      fresh.deliveries![0]!.files = [{ media: 'work/roto.png', label: 'reference.png' }];
      assert.deepEqual(moved((await importDoc(env, fresh, dir)).plan), {
        deliveries: { updated: 1 },
        package_files: { created: 1 },
      });
      const last = await packageRows(env, delivery);
      assert.equal(last.length, 4);
      assert.deepEqual(
        last.filter((r) => r.removed_at === null).map((r) => r.label),
        ['reference.png'],
      );
    });

    it('a review is written on a submission that has none; what was sent, and a review once made, stand', async () => {
      const doc = turnoverDoc(code());
      await importDoc(env, doc, dir, false);
      const production = doc.production.code;
      const token = await env.mint({ production });
      const list = async () => (await get(env.app, '/api/v1/submissions', token)).body as SubmissionAnswer[];

      const reviewed = clone(doc);
      reviewed.submissions![2]!.review = {
        decision: 'accepted',
        note: 'Clean',
        reviewed_by: 'p-ana',
        reviewed_at: '2026-03-20T12:00:00Z',
      };
      const wrote = await importDoc(env, reviewed, dir);
      assert.deepEqual(
        wrote.plan.changes.map((c) => [c.kind, c.action, c.key, c.fields]),
        [
          [
            'submissions',
            'updated',
            'eng-hal/dl-plates@2026-03-12T16:00:00.000Z: sh010 roto',
            ['status', 'review_note', 'reviewed_by', 'reviewed_by_person_id', 'reviewed_at'],
          ],
        ],
      );
      const roto = (await list()).find((s) => s.title === 'sh010 roto')!;
      assert.equal(roto.status, 'accepted');
      assert.deepEqual(roto.review, {
        decision: 'accepted',
        note: 'Clean',
        reviewed_by: 'Ana Ruiz',
        reviewed_at: '2026-03-20T12:00:00.000Z',
      });

      const rewritten = clone(reviewed);
      const v1 = rewritten.submissions![0]!;
      v1.review!.decision = 'accepted';
      v1.note = 'Edited later';
      v1.files = [{ media: 'work/comp-v2.jpg' }];
      rewritten.submissions!.pop();
      const kept = await importDoc(env, rewritten, dir);
      assert.deepEqual(
        kept.plan.changes.map((c) => [c.kind, c.action, c.fields, c.reason]),
        [['submissions', 'kept', ['note', 'status', 'files'], 'what was sent, and the review made, stand']],
      );
      const after_ = await list();
      assert.equal(after_.length, 3, 'a submission the document leaves out stays');
      const first = after_.find((s) => s.title === 'sh010 comp v1')!;
      assert.deepEqual(
        [first.status, first.note, first.media.map((m) => m.label)],
        ['changes_requested', 'First pass', ['sh010_comp_v1.jpg']],
      );
    });

    it('a bad reference or a missing file is refused with the path, and changes nothing', async () => {
      const doc = turnoverDoc(code());
      const refuse = async (d: ProductionDocument, replace: boolean, message: string) =>
        assert.rejects(
          async () => importDoc(env, d, dir, replace),
          (err: Error) => err instanceof DocumentError && err.message === message,
        );
      const unknown = clone(doc);
      unknown.submissions![1]!.delivery = 'dl-nope';
      await refuse(
        unknown,
        false,
        'submissions[1].delivery: no object in the document has the ref "dl-nope".',
      );
      const missing = clone(doc);
      missing.deliveries![0]!.files![2]!.media = 'luts/missing.cube';
      await refuse(
        missing,
        false,
        'deliveries[0].files[2].media: there is no file "luts/missing.cube" beside the document.',
      );
      const production = doc.production.code;
      assert.equal(
        await env.handle.db
          .selectFrom('productions')
          .where('code', '=', production)
          .select('id')
          .executeTakeFirst(),
        undefined,
        'a refused first import creates nothing',
      );

      await importDoc(env, doc, dir, false);
      const before_ = (await exportDocument(env.handle.db, production))!.doc;
      const mediaBefore = await env.handle.db
        .selectFrom('media')
        .select(['id', 'removed_at'])
        .orderBy('id')
        .execute();
      const wrongKind = clone(doc);
      wrongKind.deliveries![0]!.files!.pop();
      wrongKind.submissions![2]!.delivery = 'eng-pix';
      await refuse(wrongKind, true, 'submissions[2].delivery: "eng-pix" is an engagement, not a delivery.');
      const gone = clone(doc);
      gone.deliveries![0]!.files!.pop();
      gone.submissions![2]!.files![0]!.media = 'work/nowhere.png';
      await refuse(
        gone,
        true,
        'submissions[2].files[0].media: there is no file "work/nowhere.png" beside the document.',
      );
      const misspelt = clone(doc) as unknown as {
        deliveries: Array<{ files: Array<Record<string, string>> }>;
      };
      misspelt.deliveries[0]!.files[0] = { media: 'plates/sh010.exr', lable: 'x' };
      await refuse(
        misspelt as unknown as ProductionDocument,
        true,
        'deliveries[0].files[0].lable: unknown field.',
      );
      assert.deepEqual((await exportDocument(env.handle.db, production))!.doc, before_);
      assert.deepEqual(
        await env.handle.db.selectFrom('media').select(['id', 'removed_at']).orderBy('id').execute(),
        mediaBefore,
      );
    });
  });
}

for (const target of cliTargets()) {
  describe(`prodgraph export and import carry the turnover [${target.name}]`, () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-turnover-'));
    });
    after(async () => {
      await target.teardown();
      await rm(dir, { recursive: true, force: true });
    });

    it('export, import into an empty database, export: the same document and the same files', async () => {
      const src = join(dir, 'src');
      await writeFiles(src);
      await writeFile(join(src, 'production.yaml'), stringify(turnoverDoc('cli-turnover')));
      const a = { PRODGRAPH_DB: await target.db(dir, 'a'), PRODGRAPH_MEDIA: join(dir, 'media-a') };
      const b = { PRODGRAPH_DB: await target.db(dir, 'b'), PRODGRAPH_MEDIA: join(dir, 'media-b') };
      const ok = async (args: string[], env: Record<string, string>) => {
        const r = await prodgraphHere(args, env);
        assert.equal(r.code, 0, r.stderr);
        return r;
      };
      await ok(['import', join(src, 'production.yaml')], a);
      for (const out of ['one', 'two']) await mkdir(join(dir, out));
      await ok(['export', 'cli-turnover', '--out', join(dir, 'one', 'p.json'), '--json'], a);
      // the JSON export is read as a stream on its first import
      const imported = await ok(['import', join(dir, 'one', 'p.json'), '--json'], b);
      const counts = JSON.parse(imported.stdout).plan.counts;
      assert.deepEqual([counts.package_files.created, counts.submissions.created], [3, 3]);
      await ok(['export', 'cli-turnover', '--out', join(dir, 'two', 'p.json'), '--json'], b);
      const [one, two] = await Promise.all(
        ['one', 'two'].map((d) => readFile(join(dir, d, 'p.json'), 'utf8')),
      );
      assert.equal(two, one);
      const files = async (d: string) => (await readdir(join(dir, d, 'media'))).sort();
      assert.deepEqual(await files('two'), await files('one'));
      assert.equal((await files('one')).length, 7);
      const plan = await ok(['import', join(dir, 'two', 'p.json'), '--replace', '--plan'], b);
      assert.match(plan.stdout, /: no changes/);
    });
  });
}
