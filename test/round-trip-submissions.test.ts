import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MediaStore } from '../src/media/store.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { ALL_SCOPES, importRoundTrip, png, submit, type Refs } from './support/round-trip.js';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else out.push(join(d, e.name));
    }
  };
  await walk(dir);
  return out.sort();
}

async function counts(env: TestEnv) {
  const db = env.handle.db;
  const n = async (table: 'work_items' | 'media' | 'activity') =>
    Number((await db.selectFrom(table).select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return { work_items: await n('work_items'), media: await n('media'), activity: await n('activity') };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const dialect of DIALECTS) {
  describe(`turnover submissions and media [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let pix: string;
    let hal: string;
    let reader: string;
    let pw: string;

    before(async () => {
      env = await createEnv(dialect, {
        PRODGRAPH_MAX_UPLOAD_BYTES: '200000',
        PRODGRAPH_MAX_SUBMISSION_FILES: '3',
      });
      refs = await importRoundTrip(env, 'film');
      pix = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      hal = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-hal' });
      reader = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-read' });
      pw = await env.mint({ production: 'film', scopes: ALL_SCOPES });
    });
    after(() => env.close());

    it('every file becomes its own media object typed from its bytes; title defaults to the delivery title', async () => {
      const image = await png('#0f0', 32);
      const text = Buffer.from('frame list\nsh010 1001-1100\n');
      const r = await submit(env, pix, refs['dl-plates']!, [
        { name: 'note', value: 'First pass, reel 1' },
        // the declared type lies: the server types files from their bytes
        { name: 'files', filename: 'sh010.png', content: image, contentType: 'application/pdf' },
        { name: 'files', filename: 'frames.txt', content: text },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      const body = JSON.parse(r.body);
      assert.equal(body.delivery_id, refs['dl-plates']);
      assert.equal(body.status, 'submitted');
      assert.equal(body.title, 'Plates, reel 1');
      assert.equal(body.note, 'First pass, reel 1');
      assert.match(body.created_at, /Z$/);
      assert.deepEqual(
        body.media.map((m: { label: string; kind: string }) => [m.label, m.kind]),
        [
          ['sh010.png', 'image'],
          ['frames.txt', 'file'],
        ],
      );
      // each file as the submission list shows it: type, size and SHA-256 to check the upload by
      assert.deepEqual(body.media, [
        {
          id: body.media[0].id,
          label: 'sh010.png',
          kind: 'image',
          content_type: 'image/png',
          size: image.length,
          sha256: sha(image),
        },
        {
          id: body.media[1].id,
          label: 'frames.txt',
          kind: 'file',
          content_type: 'application/octet-stream',
          size: text.length,
          sha256: sha(text),
        },
      ]);
      const listed = await get(env.app, `/api/v1/submissions?delivery_id=${refs['dl-plates']}`, pix);
      assert.equal(listed.status, 200);
      const same = (listed.body as Array<{ id: number; media: unknown }>).find((s) => s.id === body.id);
      assert.deepEqual(same?.media, body.media, 'the same shape in the answer and in the list');
      const detail = await get(env.app, `/api/v1/media/${body.media[0].id}`, pix);
      assert.equal(detail.status, 200);
      const { updated_at: updatedAt, ...rest } = detail.body;
      assert.ok(updatedAt >= body.created_at, 'stamped when the submission committed');
      assert.deepEqual(rest, {
        id: body.media[0].id,
        kind: 'image',
        label: 'sh010.png',
        node_id: null,
        delivery_id: refs['dl-plates'],
        work_item_id: body.id,
        created_by: 'test key',
        created_at: body.created_at,
        content_type: 'image/png',
        size: image.length,
        sha256: sha(image),
      });
      const stored = await env.handle.db
        .selectFrom('media')
        .where('work_item_id', '=', body.id)
        .select(['uploader_engagement_id', 'storage_key'])
        .execute();
      assert.equal(stored.length, 2);
      assert.ok(stored.every((m) => m.uploader_engagement_id === refs['eng-pix']));
      const item = await env.handle.db
        .selectFrom('work_items')
        .where('id', '=', body.id)
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(item.status, 'submitted');
      assert.equal(item.engagement_id, refs['eng-pix']);
    });

    it('content streams byte-exact with Content-Type and Content-Length; Range answers 206', async () => {
      const bytes = Buffer.concat([await png('#00f', 64), randomBytes(5000)]);
      const r = await submit(env, pix, refs['dl-plates']!, [
        { name: 'title', value: 'Byte check' },
        { name: 'files', filename: 'b.png', content: bytes },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      const id = JSON.parse(r.body).media[0].id;
      assert.equal(JSON.parse(r.body).title, 'Byte check');
      const url = `/api/v1/media/${id}/content`;
      const whole = await env.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${pix}` } });
      assert.equal(whole.statusCode, 200);
      assert.equal(whole.headers['content-type'], 'image/png');
      assert.equal(Number(whole.headers['content-length']), bytes.length);
      assert.ok(whole.rawPayload.equals(bytes), 'bytes out equal bytes in');
      const part = await env.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${pix}`, range: 'bytes=100-1099' },
      });
      assert.equal(part.statusCode, 206);
      assert.equal(part.headers['content-range'], `bytes 100-1099/${bytes.length}`);
      assert.ok(part.rawPayload.equals(bytes.subarray(100, 1100)));
      const tail = await env.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${pw}`, range: 'bytes=-10' },
      });
      assert.equal(tail.statusCode, 206);
      assert.ok(tail.rawPayload.equals(bytes.subarray(bytes.length - 10)));
      const beyond = await env.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${pix}`, range: `bytes=${bytes.length + 5}-` },
      });
      assert.equal(beyond.statusCode, 416);
    });

    it('turnover work is visible only to the engagement that uploaded it, never through the delivery', async () => {
      const r = await submit(env, pix, refs['dl-plates']!, [
        { name: 'files', filename: 'x.png', content: await png() },
      ]);
      const id = JSON.parse(r.body).media[0].id;
      // eng-read holds a read grant on the very delivery
      for (const token of [reader, hal]) {
        assert.equal((await get(env.app, `/api/v1/media/${id}`, token)).status, 404);
        assert.equal((await get(env.app, `/api/v1/media/${id}/content`, token)).status, 404);
      }
      assert.equal((await get(env.app, `/api/v1/media/${id}`, pw)).status, 200);
    });

    it('version media is visible through live scene/character grants only', async () => {
      const mediaOf = async (versionRef: string) =>
        (
          await env.handle.db
            .selectFrom('versions')
            .where('id', '=', refs[versionRef]!)
            .select('media_id')
            .executeTakeFirstOrThrow()
        ).media_id!;
      const ward = await mediaOf('v-ward-1'); // sc1 uses loc-ward
      const coat = await mediaOf('v-coat-1'); // ch-mara wears co-coat
      const cape = await mediaOf('v-cape-1'); // only eng-hal's ch-jon
      const wool = (
        await env.handle.db
          .selectFrom('ingredients')
          .where('id', '=', refs['ing-wool']!)
          .select('media_id')
          .executeTakeFirstOrThrow()
      ).media_id!;
      const status = async (token: string, id: number) =>
        (await get(env.app, `/api/v1/media/${id}`, token)).status;
      assert.deepEqual(
        await Promise.all([ward, coat, wool, cape].map((id) => status(pix, id))),
        [200, 200, 200, 404],
      );
      assert.deepEqual(
        await Promise.all([ward, coat, wool, cape].map((id) => status(hal, id))),
        [404, 404, 404, 200],
      );
      const detail = await get(env.app, `/api/v1/media/${ward}`, pix);
      assert.equal(detail.body.node_id, refs['loc-ward']);
      assert.equal(detail.body.work_item_id, null, 'work_item_id only for turnover media');
      const revoked = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-rev' });
      assert.equal(await status(revoked, ward), 404);
    });

    it('refusals in order: scope 403, reach 404, submit grant 403, no file 422', async () => {
      const noScope = await env.mint({ production: 'film', scopes: ['read'], engagement: 'eng-pix' });
      const file = [{ name: 'files', filename: 'a.png', content: await png() }];
      const before = await counts(env);
      const cases: Array<[string | undefined, number, number, RegExp]> = [
        [undefined, refs['dl-plates']!, 401, /key/],
        [noScope, 999999, 403, /submit:turnover/],
        [pix, 999999, 404, /^delivery not found$/],
        [pix, refs['dl-other']!, 404, /^delivery not found$/],
        [reader, refs['dl-plates']!, 403, /submit grant/],
        [pw, refs['dl-plates']!, 403, /engagement/],
      ];
      for (const [token, id, status, detail] of cases) {
        const r = await submit(env, token, id, file);
        assert.equal(r.statusCode, status, r.body);
        assert.match(JSON.parse(r.body).detail, detail);
      }
      const empty = await submit(env, pix, refs['dl-plates']!, [
        { name: 'title', value: 'Nothing attached' },
      ]);
      assert.equal(empty.statusCode, 422);
      assert.deepEqual(JSON.parse(empty.body), {
        detail: 'files: at least one file is required',
        code: 'invalid_field',
        field: 'files',
      });
      const json = await call(env.app, 'POST', `/api/v1/turnovers/${refs['dl-plates']}/submissions`, {
        token: pix,
        body: { title: 'json' },
      });
      assert.equal(json.status, 415, 'a JSON body is not a submission form');
      assert.match(json.body.detail, /multipart\/form-data/);
      assert.deepEqual(await counts(env), before, 'no refusal wrote anything');
    });

    it('bad fields are 422 naming the field, and nothing is kept', async () => {
      const before = await counts(env);
      const storedBefore = await filesUnder(env.config.mediaDir);
      const image = await png();
      for (const [entries, detail] of [
        [
          [
            { name: 'files', filename: 'a.png', content: image },
            { name: 'titel', value: 'typo' },
          ],
          /^titel:/,
        ],
        [
          [
            { name: 'files', filename: 'a.png', content: image },
            { name: 'title', value: '   ' },
          ],
          /^title:/,
        ],
        [[{ name: 'attachment', filename: 'a.png', content: image }], /^attachment:/],
        [
          [
            { name: 'files', filename: 'a.png', content: image },
            { name: 'files', filename: 'e.bin', content: Buffer.alloc(0) },
          ],
          /^files: "e.bin" is empty/,
        ],
      ] as const) {
        const r = await submit(env, pix, refs['dl-plates']!, [...entries]);
        assert.equal(r.statusCode, 422, r.body);
        assert.match(JSON.parse(r.body).detail, detail);
      }
      assert.deepEqual(await counts(env), before);
      assert.deepEqual(
        await filesUnder(env.config.mediaDir),
        storedBefore,
        'no stored or staged bytes remain',
      );
    });

    it('limits: too many files or a file too large is 413 with {detail}; nothing is kept', async () => {
      const before = await counts(env);
      const storedBefore = await filesUnder(env.config.mediaDir);
      const small = await png();
      const many = await submit(
        env,
        pix,
        refs['dl-plates']!,
        Array.from({ length: 4 }, (_, i) => ({ name: 'files', filename: `f${i}.png`, content: small })),
      );
      assert.equal(many.statusCode, 413, many.body);
      assert.match(JSON.parse(many.body).detail, /^files: at most 3 files/);
      const big = await submit(env, pix, refs['dl-plates']!, [
        { name: 'files', filename: 'ok.png', content: small },
        { name: 'files', filename: 'big.bin', content: randomBytes(200_001) },
      ]);
      assert.equal(big.statusCode, 413, big.body);
      assert.match(JSON.parse(big.body).detail, /larger than the limit of 200000 bytes/);
      assert.deepEqual(await counts(env), before);
      assert.deepEqual(await filesUnder(env.config.mediaDir), storedBefore);
      const exact = await submit(env, pix, refs['dl-plates']!, [
        { name: 'files', filename: 'exact.bin', content: randomBytes(200_000) },
      ]);
      assert.equal(exact.statusCode, 200, 'a file of exactly the limit is accepted');
    });
  });

  describe(`submission rollback when the store fails halfway [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    /** Once armed, the store's second stage() call fails mid-submission. */
    const fault = { armed: false, calls: 0 };
    before(async () => {
      env = await createEnv(
        dialect,
        {},
        {
          wrapStore: (inner): MediaStore => {
            return {
              stage: async (productionId, source, options) => {
                if (fault.armed && ++fault.calls === 2) {
                  source.resume();
                  throw new Error('disk on fire');
                }
                return inner.stage(productionId, source, options);
              },
              open: (key, range) => inner.open(key, range),
              stat: (key) => inner.stat(key),
              delete: (key) => inner.delete(key),
              resolveKey: (key) => inner.resolveKey(key),
            };
          },
        },
      );
      refs = await importRoundTrip(env, 'film');
    });
    after(() => env.close());

    it('leaves no work item, no media rows and no stored bytes', async () => {
      const pix = await env.mint({ production: 'film', scopes: ALL_SCOPES, engagement: 'eng-pix' });
      const before = await counts(env);
      const storedBefore = await filesUnder(env.config.mediaDir);
      fault.armed = true;
      const r = await submit(env, pix, refs['dl-plates']!, [
        { name: 'files', filename: 'one.png', content: await png('#111') },
        { name: 'files', filename: 'two.png', content: await png('#222') },
        { name: 'files', filename: 'three.png', content: await png('#333') },
      ]);
      assert.equal(r.statusCode, 500);
      assert.deepEqual(JSON.parse(r.body), { detail: 'internal server error', code: 'internal' });
      assert.deepEqual(await counts(env), before);
      assert.deepEqual(await filesUnder(env.config.mediaDir), storedBefore);
      assert.equal(fault.calls, 2, 'the first file was staged, the second failed');
    });
  });
}
