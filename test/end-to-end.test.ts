import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { jpeg, upload } from './support/write.js';

/** Paths across capabilities, as a pipeline and a vendor would walk them. */
for (const dialect of DIALECTS) {
  describe(`end to end [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let wide: string;
    let vendor: string;

    before(async () => {
      env = await createEnv(dialect);
      const doc = smallProduction('e2e');
      // a chain whose subject is added once the version lands, as a coordinator would
      doc.approvals = doc.approvals!.filter((a) => a.ref !== 'ap-coat');
      ({ refs } = await env.import(doc));
      wide = await env.mint({ production: 'e2e', scopes: ['read', 'write'] });
      vendor = await env.mint({ production: 'e2e', engagement: 'eng-pix', scopes: ['read'] });
    });
    after(() => env.close());

    it('land a version → approve every step of its chain → it appears in the scene bundle with a new ETag', async () => {
      const sceneUrl = `/api/v1/bundles/scene/${refs.sc1}`;
      const before = await get(env.app, sceneUrl, vendor);
      assert.equal(before.status, 200);
      const etag = String(before.headers.etag);

      const ward = refs['loc-ward']!;
      const landed = await upload(env.app, `/api/v1/assets/${ward}/versions`, {
        token: wide,
        files: [{ name: 'ward.jpg', bytes: await jpeg(7) }],
        fields: { note: 'On-set still, take 3' },
      });
      assert.equal(landed.status, 201, landed.text);
      assert.equal(landed.body.released, false);

      // unreleased: the bundle does not change and the full record shows a locked stub
      const unchanged = await call(env.app, 'GET', sceneUrl, {
        token: vendor,
        headers: { 'if-none-match': etag },
      });
      assert.equal(unchanged.status, 304);
      const record = await get(env.app, `/api/v1/assets/${ward}`, wide);
      const stub = record.body.versions.find((v: { id: number }) => v.id === landed.body.id);
      assert.deepEqual(stub, {
        id: landed.body.id,
        version: 1,
        variant: 'On-Set',
        status: 'wip',
        released: false,
        locked: true,
        // notes landed on it are readable before release (none yet)
        notes: [],
      });

      const approvalId = (
        await env.handle.db
          .insertInto('approvals')
          .values({
            production_id: (
              await env.handle.db
                .selectFrom('productions')
                .where('code', '=', 'e2e')
                .select('id')
                .executeTakeFirstOrThrow()
            ).id,
            ref: null,
            title: 'Ward still',
            mode: 'chain',
            status: 'pending',
            due: null,
            department_id: refs.vfx!,
            subject_node_id: ward,
            subject_version_id: landed.body.id,
            current_step: 0,
            created_at: new Date().toISOString(),
            updated_at: new Date().toISOString(),
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
      const pid = (
        await env.handle.db
          .selectFrom('productions')
          .where('code', '=', 'e2e')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
      await env.handle.db
        .insertInto('approval_steps')
        .values([
          {
            production_id: pid,
            approval_id: approvalId,
            position: 0,
            person_id: refs['p-ana']!,
            decision: null,
            decided_by: null,
            note: null,
            decided_at: null,
          },
          {
            production_id: pid,
            approval_id: approvalId,
            position: 1,
            person_id: refs['p-ben']!,
            decision: null,
            decided_by: null,
            note: null,
            decided_at: null,
          },
        ])
        .execute();
      const listed = await get(env.app, '/api/v1/approvals?status=pending', wide);
      assert.ok(listed.body.some((a: { id: number }) => a.id === approvalId));

      for (const who of ['Ana Ruiz', 'Ben Okafor']) {
        const r = await call(env.app, 'POST', `/api/v1/approvals/${approvalId}/decide`, {
          token: wide,
          body: { decision: 'approved', decided_by: who, note: 'ok' },
        });
        assert.equal(r.status, 200, r.text);
      }

      const afterRelease = await call(env.app, 'GET', sceneUrl, {
        token: vendor,
        headers: { 'if-none-match': etag },
      });
      assert.equal(afterRelease.status, 200, 'the old ETag no longer matches');
      assert.notEqual(afterRelease.headers.etag, etag);
      assert.equal(afterRelease.body.etag, afterRelease.headers.etag);
      const wardInBundle = afterRelease.body.assets.find((a: { node_id: number }) => a.node_id === ward);
      const released = wardInBundle.released_versions.find((v: { id: number }) => v.id === landed.body.id);
      assert.equal(released.released, true);
      assert.match(released.media_path, /^\/media\//);

      // the vendor can now see the released media, through the clamp, byte for byte
      const media = await env.handle.db
        .selectFrom('versions')
        .where('id', '=', landed.body.id)
        .select('media_id')
        .executeTakeFirstOrThrow();
      const content = await env.app.inject({
        url: `/api/v1/media/${media.media_id}/content`,
        headers: { authorization: `Bearer ${vendor}` },
      });
      assert.equal(content.statusCode, 200);
      assert.deepEqual(content.rawPayload, await jpeg(7));

      // and the media_path is served by the off-plane route with a ticket
      const ticket = await get(env.app, '/api/v1/media-ticket', wide);
      const file = await env.app.inject({
        url: `${released.media_path}?t=${encodeURIComponent(ticket.body.ticket)}`,
      });
      assert.equal(file.statusCode, 200);
      assert.equal(file.headers['content-type'], 'image/jpeg');

      const feed = await get(env.app, '/api/v1/activity?limit=5', wide);
      assert.ok(feed.body.length >= 3, 'the upload and both decisions are in the feed');
    });

    it('a storage proxy is served by the off-plane route', async () => {
      const big = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: '#224466' } })
        .jpeg()
        .toBuffer();
      const r = await call(env.app, 'POST', '/api/v1/storage/media-proxy', {
        token: wide,
        body: { filespace: 'e2e-fs', path: 'plates/r1/sh010.exr', bytes: big.toString('base64') },
      });
      assert.equal(r.status, 200, r.text);
      const ticket = await get(env.app, '/api/v1/media-ticket', wide);
      const file = await env.app.inject({
        url: `${r.body.media_path}?t=${encodeURIComponent(ticket.body.ticket)}`,
      });
      assert.equal(file.statusCode, 200);
      assert.equal(Number(file.headers['content-length']), r.body.bytes);
      const meta = await sharp(file.rawPayload).metadata();
      assert.equal(meta.width, 2048);
      assert.equal(meta.format, 'jpeg');
    });
  });
}
