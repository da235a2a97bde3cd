import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { ProductionDocument } from '../src/document/schema.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call } from './support/http.js';

const brief = (env: TestEnv, versionId: number | string, token?: string) =>
  call(env.app, 'POST', `/api/v1/vision/looks/${versionId}/brief`, { token });

const solid = (width: number, height: number, colour: string) =>
  sharp({ create: { width, height, channels: 3, background: colour } });

/** Still images of known content, written where the production document points. */
async function writeStills(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await solid(640, 360, '#e8761e').jpeg({ quality: 92 }).toFile(join(dir, 'orange.jpg'));
  await solid(64, 64, '#808080').jpeg().toFile(join(dir, 'gone.jpg'));
  // low key: a near-black frame with a warm practical light covering an eighth of it
  const lamp = await solid(128, 128, '#c8a070').png().toBuffer();
  await solid(512, 256, '#08090c')
    .composite([{ input: lamp, left: 192, top: 64 }])
    .png()
    .toFile(join(dir, 'dark.png'));
  const left = await solid(320, 360, '#1a2b6d').png().toBuffer();
  await solid(640, 360, '#f2e6c8')
    .composite([{ input: left, left: 0, top: 0 }])
    .png()
    .toFile(join(dir, 'split.png'));
  const ramp = Buffer.alloc(256 * 32);
  for (let i = 0; i < ramp.length; i++) ramp[i] = i % 256;
  await sharp(ramp, { raw: { width: 256, height: 32, channels: 1 } })
    .png()
    .toFile(join(dir, 'ramp.png'));
  const frames = await Promise.all(['#ff0000', '#0000ff'].map((c) => solid(8, 8, c).png().toBuffer()));
  await sharp(frames, { join: { animated: true } })
    .gif({ delay: [100, 100] })
    .toFile(join(dir, 'blink.gif'));
  // sniffed as video/mp4 from its ftyp box
  await writeFile(
    join(dir, 'clip.mp4'),
    Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42\0\0\0\0mp42isom'), Buffer.alloc(64)]),
  );
  // sniffed as a JPEG, but nothing after the marker decodes
  await writeFile(
    join(dir, 'broken.jpg'),
    Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(256, 7)]),
  );
  // made once with sharp: left half #e8761e, right half #1d7874, 12,000 × 8,000, gzipped to 3 KB
  await writeFile(
    join(dir, 'wide.jpg'),
    gunzipSync(readFileSync(join(import.meta.dirname, 'fixtures', 'still-12000x8000.jpg.gz'))),
  );
  // the same still re-encoded progressive (4:2:0), 570 KB: decoding it holds ~275 MB of coefficients
  await writeFile(
    join(dir, 'wide-progressive.jpg'),
    gunzipSync(readFileSync(join(import.meta.dirname, 'fixtures', 'still-12000x8000-progressive.jpg.gz'))),
  );
}

const STILLS = [
  ['v-orange', 'orange.jpg', true],
  ['v-dark', 'dark.png', true],
  ['v-split', 'split.png', true],
  ['v-ramp', 'ramp.png', true],
  ['v-wip', 'orange.jpg', false],
  ['v-bare', null, true],
  ['v-clip', 'clip.mp4', true],
  ['v-blink', 'blink.gif', true],
  ['v-broken', 'broken.jpg', true],
  ['v-wide', 'wide.jpg', true],
  ['v-wide-progressive', 'wide-progressive.jpg', true],
  ['v-race', 'split.png', true],
  ['v-gone', 'gone.jpg', true],
] as const;

function lookbook(code: string): ProductionDocument {
  const doc = smallProduction(code);
  return {
    ...doc,
    assets: [
      ...doc.assets!,
      {
        ref: 'lookbook',
        label: 'Ward lookbook',
        kind: 'asset',
        department: 'vfx',
        status: 'active',
        versions: STILLS.map(([ref, media, released], i) => ({
          ref,
          version: i + 1,
          variant: 'Still',
          status: released ? 'approved' : 'wip',
          released,
          ...(media ? { media: `stills/${media}` } : {}),
        })),
      },
    ],
  };
}

for (const dialect of DIALECTS) {
  describe(`POST /vision/looks/{version_id}/brief [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let refs: Record<string, number>;
    let foreignVersion: number;

    before(async () => {
      env = await createEnv(dialect);
      await writeStills(join(env.dir, 'stills'));
      refs = (await env.import(lookbook('film'))).refs;
      foreignVersion = (await env.import(lookbook('other'))).refs['v-orange']!;
      token = await env.mint({ production: 'film', scopes: ['read'] });
    });
    after(() => env.close());

    const storedRows = (versionId: number) =>
      env.handle.db
        .selectFrom('vision_look_briefs')
        .where('version_id', '=', versionId)
        .selectAll()
        .execute();

    it('a solid warm orange frame: one orange, the whole frame, mid key, warm', async () => {
      const r = await brief(env, refs['v-orange']!, token);
      assert.equal(r.status, 200, r.text);
      const b = r.body;
      assert.equal(b.version_id, refs['v-orange']);
      assert.equal(b.node_id, refs['lookbook']);
      assert.equal(b.label, 'Ward lookbook');
      assert.equal(b.version, 1);
      assert.deepEqual(b.image, { width: 640, height: 360, aspect_ratio: 1.778 });
      assert.deepEqual(b.palette, [{ hex: '#e8761e', share: 1, name: 'orange' }]);
      assert.equal(b.exposure.key, 'mid');
      assert.equal(b.exposure.contrast, 0);
      assert.equal(b.exposure.clipped_highlights, 0);
      assert.equal(b.colour.warmth, 'warm');
      assert.equal(b.colour.dominant_hue, 'orange');
      assert.ok(b.colour.saturation > 0.7, String(b.colour.saturation));
      assert.match(b.summary, /^Mid-key, low-contrast, warm still dominated by orange \(100%\)/);
      assert.match(b.method, /^prodgraph-look\/1/);
      assert.ok(Date.now() - Date.parse(b.generated_at) < 60_000);
    });

    it('a dark low-key frame: near-black seven eighths, the lamp one eighth, low key', async () => {
      const r = await brief(env, refs['v-dark']!, token);
      assert.equal(r.status, 200, r.text);
      const { palette, exposure, colour } = r.body;
      assert.deepEqual(
        palette.map((p: { hex: string; share: number }) => [p.hex, p.share]),
        [
          ['#08090c', 0.875],
          ['#c8a070', 0.125],
        ],
      );
      assert.equal(palette[0].name, 'black');
      assert.equal(exposure.key, 'low');
      assert.ok(exposure.mean_luma < 0.15, String(exposure.mean_luma));
      assert.equal(colour.warmth, 'neutral');
    });

    it('a half/half split: exactly two colours at one half each, high contrast', async () => {
      const r = await brief(env, refs['v-split']!, token);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.palette, [
        { hex: '#1a2b6d', share: 0.5, name: 'navy' },
        { hex: '#f2e6c8', share: 0.5, name: 'beige' },
      ]);
      assert.ok(r.body.exposure.contrast > 0.3);
      assert.match(r.body.summary, /high-contrast/);
    });

    it('a greyscale ramp: eight even greys, no hue, neutral, mean luma one half', async () => {
      const r = await brief(env, refs['v-ramp']!, token);
      assert.equal(r.status, 200, r.text);
      const { palette, exposure, colour } = r.body;
      assert.equal(palette.length, 8);
      for (const p of palette as Array<{ hex: string; share: number }>) {
        assert.equal(p.share, 0.125);
        assert.ok(p.hex.slice(1, 3) === p.hex.slice(3, 5) && p.hex.slice(3, 5) === p.hex.slice(5, 7), p.hex);
      }
      assert.equal(
        palette.reduce((sum: number, p: { share: number }) => sum + p.share, 0),
        1,
      );
      assert.equal(exposure.mean_luma, 0.5);
      assert.equal(colour.saturation, 0);
      assert.equal(colour.dominant_hue, null);
      assert.equal(colour.warmth, 'neutral');
    });

    it('a 12,000-pixel-wide still is decoded at a bounded size, well under a second', async () => {
      const started = performance.now();
      const r = await brief(env, refs['v-wide']!, token);
      const ms = performance.now() - started;
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.image, { width: 12000, height: 8000, aspect_ratio: 1.5 });
      assert.deepEqual(
        r.body.palette.map((p: { name: string; share: number }) => [p.name, p.share]),
        // equal shares: ties go in hex order
        [
          ['teal', 0.5],
          ['orange', 0.5],
        ],
      );
      // generous for a loaded CI machine; idle it takes about a tenth of this
      assert.ok(ms < 3000, `${ms} ms`);
    });

    it('a progressive 12,000 × 8,000 still would take ~275 MB to decode: refused (422) before decoding, memory flat', async () => {
      const rss = process.memoryUsage().rss;
      const r = await brief(env, refs['v-wide-progressive']!, token);
      const grew = (process.memoryUsage().rss - rss) / 1048576;
      assert.equal(r.status, 422, r.text);
      assert.equal(r.body.code, 'invalid_field');
      assert.match(
        r.body.detail,
        /^version_id: .*about 275 MB to decode, more than the 128 MB .*12000 × 8000 jpeg saved progressive/,
      );
      assert.ok(grew < 60, `RSS grew ${Math.round(grew)} MiB`);
      assert.equal((await storedRows(refs['v-wide-progressive']!)).length, 0);
    });

    it('is stored per version and source, and served from the store until the media changes', async () => {
      const id = refs['v-orange']!;
      const first = await brief(env, id, token);
      env.queries.count = 0;
      const again = await brief(env, id, token);
      assert.deepEqual(again.body, first.body);
      assert.ok(env.queries.count <= 2, `${env.queries.count} queries: ${env.queries.sql.join('\n')}`);
      const rows = await storedRows(id);
      assert.equal(rows.length, 1);
      assert.deepEqual(JSON.parse(rows[0]!.brief), first.body);

      // what is served is the stored brief, not a fresh computation
      const doctored = { ...first.body, summary: 'from the store' };
      await env.handle.db
        .updateTable('vision_look_briefs')
        .set({ brief: JSON.stringify(doctored) })
        .where('id', '=', rows[0]!.id)
        .execute();
      assert.equal((await brief(env, id, token)).body.summary, 'from the store');

      // a brief made by another method is made again
      await env.handle.db
        .updateTable('vision_look_briefs')
        .set({ brief: JSON.stringify({ ...first.body, method: 'prodgraph-look/0' }) })
        .where('id', '=', rows[0]!.id)
        .execute();
      const remade = await brief(env, id, token);
      assert.equal(remade.body.method, first.body.method);
      assert.equal(remade.body.summary, first.body.summary);
      assert.equal((await storedRows(id)).length, 1);

      // the version's media changes: a new brief, and the old one goes
      const splitMedia = await env.handle.db
        .selectFrom('versions')
        .where('id', '=', refs['v-split']!)
        .select('media_id')
        .executeTakeFirstOrThrow();
      await env.handle.db
        .updateTable('versions')
        .set({ media_id: splitMedia.media_id })
        .where('id', '=', id)
        .execute();
      const changed = await brief(env, id, token);
      assert.equal(changed.status, 200);
      assert.equal(changed.body.palette.length, 2);
      const after = await storedRows(id);
      assert.equal(after.length, 1);
      assert.notEqual(after[0]!.source_sha256, rows[0]!.source_sha256);
    });

    it('concurrent first requests all succeed and agree; one brief is stored', async () => {
      const id = refs['v-race']!;
      const replies = await Promise.all(Array.from({ length: 6 }, () => brief(env, id, token)));
      for (const r of replies) {
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, replies[0]!.body);
      }
      assert.equal((await storedRows(id)).length, 1);
    });

    it('unknown, foreign and unreleased versions are one and the same 404', async () => {
      const answers = await Promise.all(
        [999_999, foreignVersion, refs['v-wip']!].map((id) => brief(env, id, token)),
      );
      for (const r of answers) {
        assert.equal(r.status, 404);
        assert.deepEqual(r.body, { detail: 'version not found', code: 'not_found' });
      }
      assert.equal((await storedRows(foreignVersion)).length, 0);
    });

    it('a non-integer or out-of-range id is 422', async () => {
      for (const bad of ['abc', '0', '-3', '1.5', '2147483648', '99999999999999999999']) {
        const r = await brief(env, bad, token);
        assert.equal(r.status, 422, `${bad}: ${r.text}`);
        assert.match(r.body.detail, /version_id/);
      }
    });

    it('a released version without a still answers 422 naming why, and stores nothing', async () => {
      const cases: Array<[string, RegExp]> = [
        ['v-bare', /has no media to analyse/],
        ['v-clip', /is video\/mp4, not a still image/],
        ['v-blink', /is animated, not a still image/],
        ['v-broken', /could not be decoded as an image/],
      ];
      for (const [ref, why] of cases) {
        const r = await brief(env, refs[ref]!, token);
        assert.equal(r.status, 422, `${ref}: ${r.text}`);
        assert.match(r.body.detail, why);
        assert.equal((await storedRows(refs[ref]!)).length, 0);
      }
      const gone = await env.handle.db
        .selectFrom('versions as v')
        .innerJoin('media as m', 'm.id', 'v.media_id')
        .where('v.id', '=', refs['v-gone']!)
        .select('m.storage_key')
        .executeTakeFirstOrThrow();
      await rm(env.store.resolveKey(gone.storage_key)!);
      const r = await brief(env, refs['v-gone']!, token);
      assert.equal(r.status, 422);
      assert.match(r.body.detail, /missing from the media store/);
    });

    it('refuses without a key (401), a vendor key and a key without read (403)', async () => {
      const id = refs['v-orange']!;
      assert.equal((await brief(env, id)).status, 401);
      const vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read'] });
      const v = await brief(env, id, vendor);
      assert.equal(v.status, 403);
      assert.match(v.body.detail, /vendor engagement/);
      const writeOnly = await env.mint({ production: 'film', scopes: ['write'] });
      const w = await brief(env, id, writeOnly);
      assert.equal(w.status, 403);
      assert.match(w.body.detail, /"read"/);
    });
  });
}
