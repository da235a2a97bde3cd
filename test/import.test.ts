import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { exportDocument } from '../src/document/export.js';
import { importDocument } from '../src/document/import.js';
import { DocumentError, parseDocument } from '../src/document/parse.js';
import type { ProductionDocument } from '../src/document/schema.js';
import { FileMediaStore, type MediaStore } from '../src/media/store.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction, smallSeries } from './support/fixtures.js';
import { get } from './support/http.js';

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Applies a change to a fresh copy of the small production and expects this exact message. */
const bad: Array<[string, (d: ProductionDocument) => void, string]> = [
  [
    'unknown key',
    (d) => ((d.scenes![1] as Record<string, unknown>).statsu = 'x'),
    'scenes[1].statsu: unknown field.',
  ],
  [
    'wrong type',
    (d) => ((d.scenes![0] as Record<string, unknown>).number = 12),
    'scenes[0].number: must be a string.',
  ],
  [
    'bad enum',
    (d) => ((d.production as Record<string, unknown>).accent = 'mauve'),
    'production.accent: must be one of slate, red, orange, amber, green, teal, cyan, blue, indigo, violet, rose.',
  ],
  [
    'bad scene status',
    (d) => ((d.scenes![0] as Record<string, unknown>).status = 'filmed'),
    'scenes[0].status: must be one of planned, active, blocked, done, omitted.',
  ],
  [
    'dangling ref',
    (d) => (d.scenes![0]!.assets![1] = 'ch-mra'),
    'scenes[0].assets[1]: no object in the document has the ref "ch-mra".',
  ],
  [
    'ref of the wrong kind',
    (d) => (d.shoot_days![0]!.scenes = ['ch-mara']),
    'shoot_days[0].scenes[0]: "ch-mara" is an asset, not a scene.',
  ],
  [
    'duplicate ref',
    (d) => (d.people![1]!.ref = 'p-ana'),
    'people[1].ref: the ref "p-ana" is already used at people[0].ref.',
  ],
  [
    'missing required',
    (d) => delete (d.departments![0] as Partial<(typeof d.departments & object)[0]>).name,
    'departments[0].name: is required.',
  ],
  ['bad date', (d) => (d.shoot_days![0]!.date = '2026-13-01'), 'shoot_days[0].date: must be a valid date.'],
  ['scene kind in assets', (d) => (d.assets![2]!.kind = 'scene'), 'assets[2].kind: is not allowed here.'],
  [
    'episode on a single production',
    (d) => (d.scenes![0]!.episode = 'ep1'),
    'scenes[0].episode: a single production has no episodes.',
  ],
  [
    'costumes on a non-character',
    (d) => (d.assets![2]!.costumes = ['co-coat']),
    'assets[2].costumes: only a character wears costumes.',
  ],
  [
    'decision with two steps',
    (d) => (d.approvals![1]!.steps = ['p-ben', 'p-ana']),
    'approvals[1].steps: a decision approval has exactly one step.',
  ],
  [
    'version of another node',
    (d) => (d.approvals![0]!.subject = { node: 'ch-mara', version: 'v-coat-2' }),
    'approvals[0].subject.version: "v-coat-2" is not a version of "ch-mara".',
  ],
  [
    'character grant on a non-character',
    (d) => (d.engagements![0]!.grants![1] = { kind: 'character', node: 'loc-ward' }),
    'engagements[0].grants[1].node: "loc-ward" is not a character.',
  ],
  [
    'delivery grant without access',
    (d) => (d.engagements![0]!.grants![2] = { kind: 'delivery', delivery: 'dl-plates' }),
    'engagements[0].grants[2].access: is required on a delivery grant.',
  ],
  [
    'two active cost reports',
    (d) => d.cost_reports!.push({ week_of: '2026-03-09', active: true, lines: [] }),
    'cost_reports[1].active: only one cost report may be active.',
  ],
  [
    'missing media file',
    (d) => (d.assets![1]!.versions![0]!.media = 'media/nope.jpg'),
    'assets[1].versions[0].media: there is no file "media/nope.jpg" beside the document.',
  ],
];

for (const dialect of DIALECTS) {
  describe(`production document import [${dialect}]`, () => {
    let env: TestEnv;
    before(async () => {
      env = await createEnv(dialect);
    });
    after(() => env.close());

    for (const [name, change, message] of bad) {
      it(`refuses a document with ${name}, naming the path, and writes nothing`, async () => {
        const doc = clone(smallProduction(`bad-${name.replace(/\W+/g, '-')}`));
        change(doc);
        await assert.rejects(
          () => env.import(doc),
          (err: Error) => err instanceof DocumentError && err.message === message,
        );
        const row = await env.handle.db
          .selectFrom('productions')
          .where('code', '=', doc.production.code)
          .select('id')
          .executeTakeFirst();
        assert.equal(row, undefined);
      });
    }

    it('refuses YAML that does not parse with its line', () => {
      assert.throws(
        () => parseDocument('production:\n  code: [unclosed\n'),
        /not valid YAML\/JSON at line \d+, column \d+: [^]*[^0-9:]\.$/,
      );
    });

    it('imports a document written as JSON and as YAML alike', async () => {
      const json = await env.import(JSON.stringify(smallProduction('as-json')));
      assert.ok(json.production.id > 0);
      const yaml = await env.import('production:\n  code: as-yaml\n  title: As YAML\n  format: single\n');
      assert.equal(yaml.production.code, 'as-yaml');
    });

    it('returns a refs map of every ref to the id the API uses', async () => {
      const { refs, production } = await env.import(smallSeries('refs-series'));
      for (const ref of [
        'ep1',
        'org-pix',
        'costume',
        'p-ana',
        'sc1',
        'ch-mara',
        'v-coat-1',
        'ing-wool',
        'd1',
        'ap-coat',
        'dl-plates',
        'eng-pix',
        'po1',
        'scc1',
        'job1',
      ]) {
        assert.equal(typeof refs[ref], 'number', `refs has ${ref}`);
      }
      const scene = await env.handle.db
        .selectFrom('nodes')
        .where('id', '=', refs.sc1!)
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(scene.production_id, production.id);
      assert.equal(scene.kind, 'scene');
      assert.equal(scene.episode_id, refs.ep1);
      const p = await env.handle.db
        .selectFrom('productions')
        .where('id', '=', production.id)
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(p.current_episode_id, refs.ep1);
    });

    it('refuses an existing production code unless replacing; --replace updates it in place, ids and keys kept', async () => {
      const first = await env.import(smallProduction('again'));
      const token = await env.mint({ production: 'again', engagement: 'eng-pix', scopes: ['read'] });
      await env.mint({ production: 'again', engagement: 'eng-hal', scopes: ['read'] });
      await assert.rejects(
        () => env.import(smallProduction('again')),
        /^DocumentError: production.code: a production "again" exists already; import with --replace to update it, or with --plan to see what that would change\.$/,
      );

      const doc = smallProduction('again');
      doc.production.title = 'Again, updated';
      doc.engagements = doc.engagements!.filter((e) => e.ref !== 'eng-hal');
      const parsed = parseDocument(JSON.stringify(doc));
      const second = await importDocument(env.handle.db, parsed, {
        store: env.store,
        baseDir: env.dir,
        replace: true,
      });
      assert.equal(second.production.id, first.production.id, 'the production keeps its id');
      for (const [ref, id] of Object.entries(first.refs)) {
        if (ref !== 'eng-hal') assert.equal(second.refs[ref], id, `${ref} keeps its id`);
      }
      const keys = await env.handle.db
        .selectFrom('api_keys')
        .leftJoin('engagements', 'engagements.id', 'api_keys.engagement_id')
        .where('api_keys.production_id', '=', first.production.id)
        .select(['api_keys.engagement_id', 'api_keys.revoked_at', 'engagements.retired_at'])
        .orderBy('api_keys.id')
        .execute();
      assert.equal(keys[0]!.engagement_id, first.refs['eng-pix']);
      assert.equal(keys[0]!.revoked_at, null);
      assert.equal(keys[1]!.engagement_id, first.refs['eng-hal'], 'the key stays bound to its engagement…');
      assert.notEqual(keys[1]!.retired_at, null, '…which is archived, so it reaches nothing');
      assert.ok(token);
      assert.equal(second.plan.counts.engagements?.retired, 1);
      assert.equal(second.plan.counts.production?.updated, 1);
      const scenes = await env.handle.db
        .selectFrom('nodes')
        .where('production_id', '=', first.production.id)
        .where('kind', '=', 'scene')
        .select('id')
        .execute();
      assert.equal(scenes.length, 2, 'no rows of the first import remain beside the second');
    });

    it('copies media files into the store with type, size and sha256', async () => {
      const dir = join(env.dir, 'doc-with-media');
      await mkdir(join(dir, 'media'), { recursive: true });
      const jpeg = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#336699' } })
        .jpeg()
        .toBuffer();
      await writeFile(join(dir, 'media', 'coat.jpg'), jpeg);
      const doc = smallProduction('with-media');
      doc.assets![1]!.versions![0]!.media = 'media/coat.jpg';
      doc.assets![1]!.versions![0]!.ingredients![0]!.media = 'media/coat.jpg';
      const { refs } = await env.import(doc, dir);
      const v = await env.handle.db
        .selectFrom('versions')
        .innerJoin('media', 'media.id', 'versions.media_id')
        .where('versions.id', '=', refs['v-coat-1']!)
        .select([
          'media.storage_key',
          'media.content_type',
          'media.size',
          'media.sha256',
          'media.kind',
          'media.id',
        ])
        .executeTakeFirstOrThrow();
      assert.equal(v.content_type, 'image/jpeg');
      assert.equal(v.kind, 'image');
      assert.equal(Number(v.size), jpeg.length);
      const stored = await readFile(env.store.resolveKey(v.storage_key)!);
      assert.deepEqual(stored, jpeg);
      const ing = await env.handle.db
        .selectFrom('ingredients')
        .where('id', '=', refs['ing-wool']!)
        .select('media_id')
        .executeTakeFirstOrThrow();
      assert.equal(ing.media_id, v.id, 'one file named twice is one media object');
    });

    it('rolls back everything, rows and stored files, when the import fails halfway', async () => {
      const dir = join(env.dir, 'rollback');
      const mediaDir = join(env.dir, 'rollback-store');
      await mkdir(join(dir, 'media'), { recursive: true });
      const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
        .jpeg()
        .toBuffer();
      await writeFile(join(dir, 'media', 'a.jpg'), jpeg);
      await writeFile(join(dir, 'media', 'b.jpg'), Buffer.concat([jpeg, Buffer.from('x')]));
      const doc = smallProduction('halfway');
      doc.assets![1]!.versions![0]!.media = 'media/a.jpg';
      doc.assets![1]!.versions![1]!.media = 'media/b.jpg';
      const real = new FileMediaStore(mediaDir);
      let staged = 0;
      // the second file fails after the first is staged and many rows are written
      const failing: MediaStore = Object.assign(Object.create(real) as MediaStore, {
        stage: async (...args: Parameters<MediaStore['stage']>) => {
          if (++staged === 2) throw new Error('disk full');
          return real.stage(...args);
        },
      });
      await assert.rejects(
        () =>
          importDocument(env.handle.db, parseDocument(JSON.stringify(doc)), { store: failing, baseDir: dir }),
        /disk full/,
      );
      const left = await env.handle.db
        .selectFrom('productions')
        .where('code', '=', 'halfway')
        .select('id')
        .execute();
      assert.deepEqual(left, []);
      const files = await readdir(mediaDir, { recursive: true }).catch(() => []);
      // a process keeps its own (empty) staging folder under .staging/; no file may remain in it
      const kept = (files as string[]).filter(
        (f) => /\.(jpg|bin)$/.test(f) || (f.startsWith('.staging/') && f.split('/').length > 2),
      );
      assert.deepEqual(kept, [], 'no stored or staged bytes remain');
    });

    it('imports a job without a model (the format does not require one), and exports it without one', async () => {
      const doc = smallProduction('job-no-model');
      delete (doc.jobs![0] as { model?: string }).model;
      const { refs } = await env.import(doc);
      assert.equal(typeof refs.job1, 'number', 'the jobs section was imported');
      const token = await env.mint({ production: 'job-no-model' });
      const jobs = await get(env.app, '/api/v1/jobs', token);
      assert.equal(jobs.status, 200);
      const job = (jobs.body as Array<{ id: number; model: string; prompt: string }>).find(
        (j) => j.id === refs.job1,
      );
      assert.equal(job?.model, '', 'no model is an empty model, as a job without a prompt has an empty one');
      assert.equal(job?.prompt, 'Wet wool coat');
      const exported = await exportDocument(env.handle.db, 'job-no-model');
      assert.equal(
        'model' in exported!.doc.jobs![0]!,
        false,
        'the export leaves out what the document left out',
      );
    });

    it('imports both demo productions', async () => {
      const { DEMO_FILES } = await import('../src/cli/demo.js');
      const { readDocument } = await import('../src/document/parse.js');
      const { dirname } = await import('node:path');
      for (const file of DEMO_FILES) {
        const doc = await readDocument(file);
        const out = await importDocument(env.handle.db, doc, { store: env.store, baseDir: dirname(file) });
        assert.ok(Object.keys(out.refs).length > 50, `${doc.production.code} is a full production`);
      }
    });
  });
}
