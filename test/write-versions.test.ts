import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mediaPathOf } from '../src/media/paths.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call } from './support/http.js';
import { jpeg, storedFiles, upload } from './support/write.js';

const LIMIT = 4096;

for (const dialect of DIALECTS) {
  describe(`POST /assets/{node_id}/versions [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let anaKey: string;
    let readOnly: string;
    let vendor: string;

    const nodeId = async (ref: string, code = 'film') =>
      (
        await env.handle.db
          .selectFrom('nodes')
          .innerJoin('productions', 'productions.id', 'nodes.production_id')
          .where('productions.code', '=', code)
          .where('nodes.ref', '=', ref)
          .select('nodes.id')
          .executeTakeFirstOrThrow()
      ).id;
    const versionsOf = (node: number) =>
      env.handle.db
        .selectFrom('versions')
        .where('node_id', '=', node)
        .selectAll()
        .orderBy('version')
        .execute();
    const mediaCount = async () =>
      Number(
        (
          await env.handle.db
            .selectFrom('media')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const land = async (node: number, opts: Parameters<typeof upload>[2] = {}) =>
      upload(env.app, `/api/v1/assets/${node}/versions`, {
        token,
        files: [{ name: 'still.jpg', bytes: await jpeg(1) }],
        ...opts,
      });

    before(async () => {
      // a small upload limit so the 413 case needs only a few kilobytes
      env = await createEnv(dialect, { PRODGRAPH_MAX_UPLOAD_BYTES: String(LIMIT) });
      await env.import(smallProduction('film'));
      await env.import(smallProduction('other'));
      token = await env.mint({ production: 'film', label: 'Cart 2' });
      anaKey = await env.mint({ production: 'film', label: 'Ana cart', person: 'p-ana' });
      readOnly = await env.mint({ production: 'film', scopes: ['read'] });
      vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read', 'write'] });
    });
    after(() => env.close());

    it('lands a wip, unreleased version with the next number, the bytes stored, content type sniffed', async () => {
      const coat = await nodeId('co-coat');
      const bytes = await jpeg(7);
      const r = await land(coat, {
        // the declared type is ignored: the bytes say JPEG
        files: [{ name: 'IMG_0042.bin', bytes, type: 'application/octet-stream' }],
        fields: { note: 'Wet pass', variant: 'Rain' },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.headers.location, `/api/v1/assets/${coat}`);
      assert.equal(r.body.version, 3);
      assert.equal(r.body.variant, 'Rain');
      assert.equal(r.body.status, 'wip');
      assert.equal(r.body.released, false);
      assert.equal(r.body.locked, true);
      assert.equal(r.body.note, 'Wet pass');
      assert.equal(r.body.content_type, 'image/jpeg');
      assert.equal(r.body.size, bytes.length);
      assert.equal(r.body.created_by, 'Cart 2');

      const [row] = (await versionsOf(coat)).filter((v) => v.version === 3);
      assert.ok(row);
      assert.equal(row.status, 'wip');
      assert.equal(row.released, 0);
      const media = await env.handle.db
        .selectFrom('media')
        .where('id', '=', row.media_id!)
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(media.content_type, 'image/jpeg');
      assert.equal(media.kind, 'image');
      assert.equal(media.node_id, coat);
      assert.equal(media.sha256, r.body.sha256);
      assert.ok(media.storage_key.endsWith('.jpg'));
      const stored = await readFile(join(env.store.root, media.storage_key));
      assert.ok(stored.equals(bytes), 'the stored bytes are the uploaded bytes');
      // the answer names what was landed, so the uploader can fetch it back before release
      assert.equal(r.body.media_id, media.id);
      assert.equal(r.body.media_path, mediaPathOf(media.storage_key));
      const content = await env.app.inject({
        url: `/api/v1/media/${r.body.media_id}/content`,
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(content.statusCode, 200);
      assert.ok(content.rawPayload.equals(bytes));
      const ticket = (
        await env.app.inject({ url: '/api/v1/media-ticket', headers: { authorization: `Bearer ${token}` } })
      ).json().ticket;
      const byPath = await env.app.inject({ url: `${r.body.media_path}?t=${ticket}` });
      assert.equal(byPath.statusCode, 200);
      assert.ok(byPath.rawPayload.equals(bytes));

      const node = await env.handle.db
        .selectFrom('nodes')
        .where('id', '=', coat)
        .select('updated_at')
        .executeTakeFirstOrThrow();
      assert.equal(node.updated_at, r.body.created_at);
      const entry = await env.handle.db
        .selectFrom('activity')
        .where('node_id', '=', coat)
        .where('verb', '=', 'uploaded')
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(entry.actor, 'Cart 2');
      assert.match(entry.summary, /v3 \(Rain\)/);
    });

    it('defaults the variant to On-Set, numbers a first version 1, names the key person', async () => {
      const created = await call(env.app, 'POST', '/api/v1/assets', {
        token,
        body: { label: 'Hero lantern', kind: 'prop', department: 'vfx' },
      });
      const r = await land(created.body.node_id, { token: anaKey });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.version, 1);
      assert.equal(r.body.variant, 'On-Set');
      assert.equal(r.body.note, null);
      assert.equal(r.body.created_by, 'Ana Ruiz');
      assert.ok(r.body.created_by_person_id);
    });

    it('two (five) concurrent uploads to one asset get different numbers, every file kept', async () => {
      const ward = await nodeId('loc-ward');
      const answers = await Promise.all(
        [1, 2, 3, 4, 5].map(async (i) =>
          land(ward, { files: [{ name: `s${i}.jpg`, bytes: await jpeg(i * 10) }] }),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [201, 201, 201, 201, 201],
      );
      assert.deepEqual(answers.map((a) => a.body.version).sort(), [1, 2, 3, 4, 5]);
      const rows = await versionsOf(ward);
      assert.deepEqual(
        rows.map((v) => v.version),
        [1, 2, 3, 4, 5],
      );
      const keys = await env.handle.db
        .selectFrom('media')
        .where('node_id', '=', ward)
        .select('storage_key')
        .execute();
      assert.equal(new Set(keys.map((k) => k.storage_key)).size, 5);
      for (const k of keys) assert.ok(existsSync(join(env.store.root, k.storage_key)));
    });

    it('413 beyond the upload limit: no row, no stored bytes, nothing staged', async () => {
      const coat = await nodeId('co-coat');
      const files = await storedFiles(env.store.root);
      const media = await mediaCount();
      const versions = (await versionsOf(coat)).length;
      const r = await land(coat, { files: [{ name: 'big.bin', bytes: Buffer.alloc(LIMIT * 3, 7) }] });
      assert.equal(r.status, 413);
      assert.ok(r.body.detail);
      assert.equal((await versionsOf(coat)).length, versions);
      assert.equal(await mediaCount(), media);
      assert.deepEqual(await storedFiles(env.store.root), files);
    });

    it('a failed write leaves no row and no stored bytes', async () => {
      const coat = await nodeId('co-coat');
      const headers = { 'idempotency-key': 'cart2-take-9' };
      const first = await land(coat, { headers });
      assert.equal(first.status, 201);
      const files = await storedFiles(env.store.root);
      const media = await mediaCount();
      // the same key with other bytes is refused inside the write, after the bytes were staged
      const refused = await land(coat, { headers, files: [{ name: 'still.jpg', bytes: await jpeg(99) }] });
      assert.equal(refused.status, 422);
      assert.match(refused.body.detail, /^Idempotency-Key:/);
      assert.equal(await mediaCount(), media);
      assert.deepEqual(await storedFiles(env.store.root), files);
    });

    for (const [name, opts, status, field] of [
      ['no file', { files: [], fields: { note: 'x' } }, 422, 'file'],
      [
        'two files',
        { files: [1, 2].map((i) => ({ name: `${i}.jpg`, bytes: Buffer.from([i]) })) },
        422,
        'file',
      ],
      [
        'a file under another name',
        { files: [{ name: 'a.jpg', bytes: Buffer.from('x'), field: 'image' }] },
        422,
        'image',
      ],
      ['an unknown field', { fields: { colour: 'red' } }, 422, 'colour'],
    ] as const) {
      it(`422 naming the field, nothing stored: ${name}`, async () => {
        const coat = await nodeId('co-coat');
        const files = await storedFiles(env.store.root);
        const versions = (await versionsOf(coat)).length;
        const r = await land(coat, opts as Parameters<typeof upload>[2]);
        assert.equal(r.status, status, r.text);
        assert.ok(r.body.detail.startsWith(`${field}:`), r.body.detail);
        assert.equal((await versionsOf(coat)).length, versions);
        assert.deepEqual(await storedFiles(env.store.root), files);
      });
    }

    it('415 when the body is not multipart', async () => {
      const coat = await nodeId('co-coat');
      const r = await call(env.app, 'POST', `/api/v1/assets/${coat}/versions`, {
        token,
        body: { note: 'x' },
      });
      assert.equal(r.status, 415);
      assert.match(r.body.detail, /multipart/);
    });

    it("404 alike for a scene, an unknown node and another production's asset; nothing stored", async () => {
      const files = await storedFiles(env.store.root);
      for (const id of [await nodeId('sc1'), 424242, await nodeId('co-coat', 'other')]) {
        const r = await land(id);
        assert.equal(r.status, 404);
        assert.deepEqual(r.body, { detail: 'asset not found', code: 'not_found' });
      }
      assert.deepEqual(await storedFiles(env.store.root), files);
    });

    it('401 without a key, 403 read-only and vendor keys', async () => {
      const coat = await nodeId('co-coat');
      assert.equal((await land(coat, { token: '' })).status, 401);
      assert.equal((await land(coat, { token: readOnly })).status, 403);
      const v = await land(coat, { token: vendor });
      assert.equal(v.status, 403);
      assert.match(v.body.detail, /engagement/);
    });
  });
}
