import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportDocument, type Exported } from '../src/document/export.js';
import type { ProductionDocument } from '../src/document/schema.js';
import { summarise } from '../src/document/sync/plan.js';
import { addGrant } from '../src/modules/admin/service.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { call, get } from './support/http.js';
import { demoDir, demoDoc, importDoc } from './support/sync.js';
import { jpeg, upload } from './support/write.js';

/*
 * `prodgraph export`, edit, `prodgraph import --replace`: the export names what the API made
 * (assets created through the API, landed versions) with refs of its own, and a sync of that
 * document into the same database finds those objects by them, changes none of them, and lets
 * the document refer to them (an approval on a landed version).
 */

const ALL = ['read', 'write', 'submit:turnover', 'read:money', 'admin'] as const;

/** Writes an export (document and media) into a folder of its own, as the CLI does. */
async function writeExport(env: TestEnv, exported: Exported): Promise<string> {
  const dir = await mkdtemp(join(env.dir, 'export-'));
  for (const f of exported.files) {
    const { mkdir, copyFile } = await import('node:fs/promises');
    const { dirname } = await import('node:path');
    await mkdir(dirname(join(dir, f.rel)), { recursive: true });
    await copyFile(env.store.resolveKey(f.storageKey)!, join(dir, f.rel));
  }
  await writeFile(join(dir, 'production.json'), JSON.stringify(exported.doc));
  return dir;
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

for (const dialect of DIALECTS) {
  describe(`an export synced back into its own database [${dialect}]`, () => {
    let env: TestEnv;
    before(async () => {
      env = await createEnv(dialect);
    });
    after(() => env.close());

    it('changes nothing, and an approval added to it can name a landed version by the ref the export gave it', async () => {
      const doc = demoDoc('episodic', 'export-sync');
      const { refs, production } = await importDoc(env, doc, demoDir('episodic'), false);
      const token = await env.mint({ production: doc.production.code, scopes: [...ALL] });
      const created = await call(env.app, 'POST', '/api/v1/assets', {
        token,
        body: { label: 'Night nurse', kind: 'character', department: 'art' },
      });
      assert.equal(created.status, 201);
      const apiAsset = (created.body as { node_id: number }).node_id;
      const onApiAsset = await upload(env.app, `/api/v1/assets/${apiAsset}/versions`, {
        token,
        files: [{ name: 'nurse.jpg', bytes: await jpeg(3) }],
      });
      assert.equal(onApiAsset.status, 201);
      const landed = await upload(env.app, `/api/v1/assets/${refs['fx-3am']}/versions`, {
        token,
        files: [{ name: 'still.jpg', bytes: await jpeg(7) }],
      });
      assert.equal(landed.status, 201);
      const landedId = (landed.body as { id: number }).id;
      const noted = await call(env.app, 'POST', `/api/v1/assets/${refs['fx-3am']}/notes`, {
        token,
        body: { text: 'Too warm' },
      });
      assert.equal(noted.status, 201);
      await addGrant(
        env.handle.db,
        production.id,
        { name: 'ops', apiKeyId: null, personId: null },
        { engagement_id: refs['eng-pixel']!, kind: 'character', node_id: apiAsset },
      );

      const first = (await exportDocument(env.handle.db, 'export-sync'))!;
      const landedNumber = (landed.body as { version: number }).version;
      const landedRef = first.doc
        .assets!.find((a) => a.ref === 'fx-3am')!
        .versions!.find((v) => v.version === landedNumber)?.ref;
      assert.ok(landedRef, 'the landed version has a ref in the export');
      assert.equal(first.refs[landedRef], landedId);
      const again = (await exportDocument(env.handle.db, 'export-sync'))!;
      assert.deepEqual(again.doc, first.doc, 'the export is stable: the same refs every time');

      const dir = await writeExport(env, first);
      const unchanged = await importDoc(env, first.doc, dir);
      assert.equal(summarise(unchanged.plan), 'no changes', JSON.stringify(unchanged.plan.changes));
      assert.equal(unchanged.refs[landedRef], landedId);

      const edited: ProductionDocument = clone(first.doc);
      const person = edited.people![0]!.ref;
      edited.approvals!.push({
        ref: 'ap-landed',
        title: 'Landed still, look',
        mode: 'decision',
        subject: { node: 'fx-3am', version: landedRef },
        steps: [person],
      });
      const synced = await importDoc(env, edited, dir);
      assert.equal(summarise(synced.plan), 'approvals 1 created', JSON.stringify(synced.plan.changes));
      const approvals = await get(env.app, '/api/v1/approvals', token);
      assert.equal(approvals.status, 200);
      const approval = (
        approvals.body as Array<{ id: number; subject: { node_id: number; version_id: number } }>
      ).find((a) => a.id === synced.refs['ap-landed']);
      const subject = approval!.subject;
      assert.deepEqual([subject.node_id, subject.version_id], [refs['fx-3am'], landedId]);
      const versions = await env.handle.db
        .selectFrom('versions')
        .where('node_id', 'in', [refs['fx-3am']!, apiAsset])
        .select(['id', 'source'])
        .execute();
      assert.equal(
        versions.filter((v) => v.source === 'api').length,
        2,
        'the landed versions are as they were',
      );
    });
  });
}
