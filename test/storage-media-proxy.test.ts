import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, type Reply } from './support/http.js';
import { storageKeyOf } from '../src/media/paths.js';

const URL = '/api/v1/storage/media-proxy';
const MIB8 = 8 * 1024 * 1024;
const PLATE = 'plates/r1/sh010.exr';

/** A wide noisy JPEG carrying EXIF, so re-encoding, bounding and stripping all show. */
async function sampleJpeg(width = 3000, height = 1500): Promise<Buffer> {
  const noise = Buffer.alloc(width * height * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  return sharp(noise, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 60 })
    .withMetadata({ exif: { IFD0: { Copyright: 'secret camera owner', Artist: 'someone' } } })
    .toBuffer();
}

/** Pads a JPEG to exactly `size` bytes with comment segments (still a valid JPEG). */
function padJpeg(jpeg: Buffer, size: number): Buffer {
  let need = size - jpeg.length;
  assert.ok(need >= 4);
  const segments: Buffer[] = [];
  while (need > 0) {
    let total = Math.min(need, 65537);
    if (need - total > 0 && need - total < 4) total -= 4;
    const seg = Buffer.alloc(total, 0x20);
    seg[0] = 0xff;
    seg[1] = 0xfe;
    seg.writeUInt16BE(total - 2, 2);
    segments.push(seg);
    need -= total;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

function multipart(fields: Record<string, string>, file?: { name?: string; bytes: Buffer }) {
  const boundary = '----prodgraphtest' + Math.random().toString(36).slice(2);
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file)
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name ?? 'file'}"; filename="proxy.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    body: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

for (const dialect of DIALECTS) {
  describe(`POST /storage/media-proxy [${dialect}]`, () => {
    let env: TestEnv;
    let key: string;
    let jpeg: Buffer;
    let pid: number;

    before(async () => {
      env = await createEnv(dialect);
      const make = new Factory(env.handle.db);
      pid = (await make.production({ code: 'film' })).id;
      await make.libraryFile(pid, { path: PLATE, size: 81234567 });
      const pix = await make.organisation(pid, { name: 'Pixelworks Ltd' });
      await make.engagement(pid, pix.id, { ref: 'eng-pix' });
      key = await env.mint({ production: 'film' });
      jpeg = await sampleJpeg();
    });
    after(() => env.close());

    const sendJson = (body: Record<string, unknown>, token: string | null = key) =>
      call(env.app, 'POST', URL, {
        token: token ?? undefined,
        body: { filespace: 'film-fs', path: PLATE, ...body },
      });
    const sendForm = (
      fields: Record<string, string>,
      file?: { name?: string; bytes: Buffer },
    ): Promise<Reply> => {
      const m = multipart(fields, file);
      return call(env.app, 'POST', URL, { token: key, body: m.body, headers: m.headers });
    };
    const plateRow = () =>
      env.handle.db
        .selectFrom('library_files')
        .where('production_id', '=', pid)
        .where('path', '=', PLATE)
        .selectAll()
        .executeTakeFirstOrThrow();
    const storedAt = (mediaPath: string) =>
      env.store.resolveKey(storageKeyOf(pid, mediaPath.replace(/^\/media\//, '')))!;

    it('refuses without a key (401), without write or for a vendor key (403), for another filespace (403)', async () => {
      const b64 = jpeg.toString('base64');
      assert.equal((await sendJson({ bytes: b64 }, null)).status, 401);
      assert.equal(
        (await sendJson({ bytes: b64 }, await env.mint({ production: 'film', scopes: ['read'] }))).status,
        403,
      );
      const vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read', 'write'] });
      assert.equal((await sendJson({ bytes: b64 }, vendor)).status, 403);
      const r = await sendJson({ bytes: b64, filespace: 'someone-else' });
      assert.equal(r.status, 403);
      assert.match(r.body.detail, /filespace/);
    });

    it('answers 404 for a path with no live library row, 422 for a bad path or missing fields', async () => {
      const b64 = jpeg.toString('base64');
      const r1 = await sendJson({ bytes: b64, path: 'plates/r1/nope.exr' });
      assert.equal(r1.status, 404);
      assert.deepEqual(r1.body, { detail: 'library file not found', code: 'not_found' });
      const r2 = await sendJson({ bytes: b64, path: '../etc/passwd' });
      assert.equal(r2.status, 422);
      assert.match(r2.body.detail, /^path/);
      const r3 = await call(env.app, 'POST', URL, {
        token: key,
        body: { filespace: 'film-fs', path: PLATE },
      });
      assert.equal(r3.status, 422);
      assert.match(r3.body.detail, /^bytes: is required/);
      const r4 = await sendJson({ bytes: 'not base64!!' });
      assert.equal(r4.status, 422);
      assert.match(r4.body.detail, /^bytes: must be base64/);
      const r5 = await sendForm({ filespace: 'film-fs', path: PLATE });
      assert.equal(r5.status, 422);
      assert.match(r5.body.detail, /^file: is required/);
      const r6 = await sendForm({ filespace: 'film-fs' }, { bytes: jpeg });
      assert.equal(r6.status, 422);
      assert.match(r6.body.detail, /^path: is required/);
    });

    it('refuses bytes that are not a JPEG with 415, whatever the headers say', async () => {
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } })
        .png()
        .toBuffer();
      const r1 = await sendJson({ bytes: png.toString('base64') });
      assert.equal(r1.status, 415);
      assert.match(r1.body.detail, /JPEG/);
      const r2 = await sendForm({ filespace: 'film-fs', path: PLATE }, { bytes: png });
      assert.equal(r2.status, 415);
      const fake = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(500, 7)]);
      const r3 = await sendJson({ bytes: fake.toString('base64') });
      assert.equal(r3.status, 415, 'JPEG magic but undecodable');
      assert.equal((await plateRow()).proxy_media_id, null, 'nothing was recorded');
    });

    it('stores a bounded, re-encoded, metadata-free JPEG and leaves the library row alone', async () => {
      const before = await plateRow();
      const r = await sendJson({ bytes: jpeg.toString('base64') });
      assert.equal(r.status, 200);
      assert.equal(r.body.ok, true);
      assert.match(r.body.media_path, /^\/media\/.+\.jpg$/);
      const file = await readFile(storedAt(r.body.media_path));
      assert.equal(r.body.bytes, file.length);
      const meta = await sharp(file).metadata();
      assert.equal(meta.format, 'jpeg');
      assert.equal(meta.width, 2048);
      assert.equal(meta.height, 1024);
      assert.equal(meta.exif, undefined, 'EXIF stripped');
      const after = await plateRow();
      assert.equal(after.path, before.path);
      assert.equal(Number(after.size), Number(before.size));
      assert.equal(after.updated_at, before.updated_at);
      assert.notEqual(after.proxy_media_id, null);
      const media = await env.handle.db
        .selectFrom('media')
        .where('id', '=', after.proxy_media_id!)
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(media.content_type, 'image/jpeg');
      assert.equal(Number(media.size), file.length);
    });

    it('replaces the previous proxy: new row and file, the old ones removed', async () => {
      const first = await sendJson({ bytes: jpeg.toString('base64') });
      const firstId = (await plateRow()).proxy_media_id!;
      const small = await sampleJpeg(640, 480);
      const second = await sendForm({ filespace: 'film-fs', path: PLATE }, { bytes: small });
      assert.equal(second.status, 200);
      assert.notEqual(second.body.media_path, first.body.media_path);
      const row = await plateRow();
      assert.notEqual(row.proxy_media_id, firstId);
      assert.equal(existsSync(storedAt(first.body.media_path)), false, 'old stored JPEG deleted');
      const old = await env.handle.db.selectFrom('media').where('id', '=', firstId).selectAll().execute();
      assert.equal(old.length, 0, 'old media row deleted');
      const meta = await sharp(await readFile(storedAt(second.body.media_path))).metadata();
      assert.deepEqual([meta.width, meta.height], [640, 480], 'never enlarged');
    });

    it('takes exactly 8 MiB of JPEG and refuses one byte more (413), in both forms', async () => {
      const exact = padJpeg(jpeg, MIB8);
      assert.equal(exact.length, MIB8);
      const ok = await sendJson({ bytes: exact.toString('base64') });
      assert.equal(ok.status, 200, ok.text);
      const over = padJpeg(jpeg, MIB8 + 1);
      const r1 = await sendJson({ bytes: over.toString('base64') });
      assert.equal(r1.status, 413);
      const okForm = await sendForm(
        { filespace: 'film-fs', path: PLATE },
        { bytes: padJpeg(jpeg, MIB8 - 1) },
      );
      assert.equal(okForm.status, 200, okForm.text);
      const r2 = await sendForm({ filespace: 'film-fs', path: PLATE }, { bytes: over });
      assert.equal(r2.status, 413);
      // a JSON body past ~11.2 MB is cut off before it is read whole
      const r3 = await sendJson({ bytes: 'A'.repeat(12 * 1024 * 1024) });
      assert.equal(r3.status, 413);
    });
  });
}
