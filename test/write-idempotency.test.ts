import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { Factory } from './support/factory.js';
import { call, get } from './support/http.js';
import { jpeg, storedFiles, upload } from './support/write.js';

type Table = 'nodes' | 'activity' | 'version_notes' | 'versions' | 'media' | 'idempotency_keys';

for (const dialect of DIALECTS) {
  describe(`Idempotency-Key on write POSTs [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let second: string;

    const count = async (table: Table) =>
      Number(
        (
          await env.handle.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const counts = async () => ({
      nodes: await count('nodes'),
      activity: await count('activity'),
      notes: await count('version_notes'),
      versions: await count('versions'),
      media: await count('media'),
    });
    const post = (url: string, body: unknown, key?: string, t = token) =>
      call(env.app, 'POST', `/api/v1${url}`, {
        token: t,
        body,
        headers: key ? { 'idempotency-key': key } : {},
      });
    const nodeId = async (ref: string) =>
      (
        await env.handle.db
          .selectFrom('nodes')
          .innerJoin('productions', 'productions.id', 'nodes.production_id')
          .where('productions.code', '=', 'film')
          .where('nodes.ref', '=', ref)
          .select('nodes.id')
          .executeTakeFirstOrThrow()
      ).id;

    before(async () => {
      env = await createEnv(dialect);
      // what the writes below name: two departments, two assets, a two-step approval of a version
      const make = new Factory(env.handle.db);
      const film = (await make.production({ code: 'film' })).id;
      const costume = await make.department(film, { slug: 'costume', name: 'Costume' });
      await make.department(film, { slug: 'vfx', name: 'Visual Effects' });
      const ana = await make.person(film, { ref: 'p-ana', name: 'Ana Ruiz', department_id: costume.id });
      const ben = await make.person(film, { ref: 'p-ben', name: 'Ben Okafor' });
      const coat = await make.asset(film, { ref: 'co-coat', kind: 'costume', label: 'Mara coat' });
      await make.asset(film, { ref: 'loc-ward', kind: 'location', label: 'Ward' });
      const wip = await make.version(film, coat.id, { ref: 'v-coat-2', version: 2 });
      await make.approval(film, {
        ref: 'ap-coat',
        subject_node_id: coat.id,
        subject_version_id: wip.id,
        steps: [ana.id, ben.id],
      });
      token = await env.mint({ production: 'film', label: 'Farm' });
      second = await env.mint({ production: 'film', label: 'Farm 2' });
    });
    after(() => env.close());

    it('a repeat with the same key and body replays the original status, body and Location, writing nothing', async () => {
      const first = await post('/assets', { label: 'Crate', kind: 'prop' }, 'k-create-1');
      assert.equal(first.status, 201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const before = await counts();
      // the same JSON with its keys in another order is the same request
      const again = await post('/assets', { kind: 'prop', label: 'Crate' }, 'k-create-1');
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers.location, first.headers.location);
      assert.deepEqual(again.body, first.body);
      assert.deepEqual(await counts(), before);
    });

    it('without a key every POST writes again', async () => {
      const before = await count('nodes');
      await post('/assets', { label: 'Crate' });
      await post('/assets', { label: 'Crate' });
      assert.equal(await count('nodes'), before + 2);
    });

    it('the same key with another body, or on another route, is 422 and writes nothing', async () => {
      await post('/assets', { label: 'Barrel' }, 'k-create-2');
      const before = await counts();
      const other = await post('/assets', { label: 'Barrel 2' }, 'k-create-2');
      assert.equal(other.status, 422);
      assert.match(other.body.detail, /^Idempotency-Key:/);
      const coat = await nodeId('co-coat');
      const elsewhere = await post(`/assets/${coat}/notes`, { text: 'x' }, 'k-create-2');
      assert.equal(elsewhere.status, 422);
      assert.deepEqual(await counts(), before);
    });

    it('keys belong to one API key: another key may use the same string', async () => {
      const a = await post('/assets', { label: 'Shared key' }, 'k-shared');
      const b = await post('/assets', { label: 'Shared key' }, 'k-shared', second);
      assert.equal(a.status, 201);
      assert.equal(b.status, 201);
      assert.notEqual(a.body.node_id, b.body.node_id);
      assert.equal(b.headers['idempotent-replayed'], undefined);
    });

    it('concurrent repeats of one keyed request write once and all answer the same', async () => {
      const before = await counts();
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => post('/assets', { label: 'Flaky network' }, 'k-burst')),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [201, 201, 201, 201, 201],
      );
      assert.equal(new Set(answers.map((a) => a.body.node_id)).size, 1);
      assert.equal(answers.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 4);
      const after = await counts();
      assert.equal(after.nodes, before.nodes + 1);
      assert.equal(after.activity, before.activity + 1);
    });

    it('a refused request is not remembered: the key can be retried once the request is fixed', async () => {
      const bad = await post('/assets', { label: 'Lamp', department: 'lighting' }, 'k-fix');
      assert.equal(bad.status, 422);
      const again = await post('/assets', { label: 'Lamp', department: 'lighting' }, 'k-fix');
      assert.equal(again.status, 422, 'a refusal is answered afresh, not replayed');
      const fixed = await post('/assets', { label: 'Lamp', department: 'vfx' }, 'k-fix');
      assert.equal(fixed.status, 201);
    });

    it('notes: a retried note lands once', async () => {
      const coat = await nodeId('co-coat');
      const a = await post(`/assets/${coat}/notes`, { text: 'Buttons loose' }, 'k-note');
      const before = await counts();
      const b = await post(`/assets/${coat}/notes`, { text: 'Buttons loose' }, 'k-note');
      assert.equal(b.status, 201);
      assert.deepEqual(b.body, a.body);
      assert.deepEqual(await counts(), before);
    });

    it('keyed notes committed together are each remembered: every retry replays its own answer', async () => {
      const coat = await nodeId('co-coat');
      const texts = Array.from({ length: 8 }, (_, i) => `Together ${i}`);
      const start = env.queries.sql.length;
      const firsts = await Promise.all(
        texts.map((text, i) => post(`/assets/${coat}/notes`, { text }, `k-together-${i}`)),
      );
      assert.deepEqual(
        firsts.map((r) => r.status),
        texts.map(() => 201),
      );
      const remembering = env.queries.sql.slice(start).filter((q) => /^update "?idempotency_keys"?/i.test(q));
      if (dialect === 'postgres') {
        // the writes of a group record their answers in one statement at the group's end
        assert.ok(
          remembering.length < texts.length,
          `${remembering.length} statements for ${texts.length} notes`,
        );
      }
      const before = await counts();
      const retries = await Promise.all(
        texts.map((text, i) => post(`/assets/${coat}/notes`, { text }, `k-together-${i}`)),
      );
      for (const [i, r] of retries.entries()) {
        assert.equal(r.status, 201);
        assert.equal(r.headers['idempotent-replayed'], 'true');
        assert.deepEqual(r.body, firsts[i]!.body);
      }
      assert.deepEqual(await counts(), before);
    });

    it('decide: a retried decision replays 200 instead of deciding the next step or answering 409', async () => {
      const ap = await env.handle.db
        .selectFrom('approvals')
        .where('ref', '=', 'ap-coat')
        .select('id')
        .executeTakeFirstOrThrow();
      const body = { decision: 'approved' };
      const a = await post(`/approvals/${ap.id}/decide`, body, 'k-decide');
      assert.equal(a.status, 200);
      assert.equal(a.body.current_step, 1);
      const b = await post(`/approvals/${ap.id}/decide`, body, 'k-decide');
      assert.equal(b.status, 200);
      assert.deepEqual(b.body, a.body);
      const steps = await env.handle.db
        .selectFrom('approval_steps')
        .where('approval_id', '=', ap.id)
        .select('decision')
        .orderBy('position')
        .execute();
      assert.deepEqual(
        steps.map((s) => s.decision),
        ['approved', null],
      );
    });

    it('uploads: same fields and bytes replay; other bytes under the key are 422 and store nothing', async () => {
      const ward = await nodeId('loc-ward');
      const bytes = await jpeg(5);
      const send = (b: Buffer) =>
        upload(env.app, `/api/v1/assets/${ward}/versions`, {
          token,
          files: [{ name: 'a.jpg', bytes: b }],
          fields: { note: 'take 1' },
          headers: { 'idempotency-key': 'k-upload' },
        });
      const a = await send(bytes);
      assert.equal(a.status, 201);
      const before = await counts();
      const files = await storedFiles(env.store.root);
      const b = await send(bytes);
      assert.equal(b.status, 201);
      assert.equal(b.headers['idempotent-replayed'], 'true');
      assert.equal(b.headers.location, a.headers.location);
      assert.deepEqual(b.body, a.body);
      const c = await send(await jpeg(200));
      assert.equal(c.status, 422);
      assert.deepEqual(await counts(), before);
      assert.deepEqual(await storedFiles(env.store.root), files, 'replays and refusals keep no bytes');
    });

    it('after 24 hours a key is forgotten and the request writes again', async () => {
      const a = await post('/assets', { label: 'Old crate' }, 'k-old');
      await env.handle.db
        .updateTable('idempotency_keys')
        .set({ created_at: new Date(Date.now() - 25 * 3600 * 1000).toISOString() })
        .where('key', '=', 'k-old')
        .execute();
      const b = await post('/assets', { label: 'Old crate' }, 'k-old');
      assert.equal(b.status, 201);
      assert.equal(b.headers['idempotent-replayed'], undefined);
      assert.notEqual(b.body.node_id, a.body.node_id);
      const rows = await env.handle.db
        .selectFrom('idempotency_keys')
        .where('key', '=', 'k-old')
        .select('id')
        .execute();
      assert.equal(rows.length, 1);
    });

    it('an over-long or empty key is 422', async () => {
      assert.equal((await post('/assets', { label: 'X' }, 'k'.repeat(256))).status, 422);
      const empty = await call(env.app, 'POST', '/api/v1/assets', {
        token,
        body: { label: 'X' },
        headers: { 'idempotency-key': '' },
      });
      assert.equal(empty.status, 422);
    });

    it('OpenAPI documents the four write routes, their header and their refusals', async () => {
      const doc = (await get(env.app, '/api/v1/openapi.json')).body;
      assert.deepEqual(await new Validator().validate(doc), { valid: true });
      const routes = [
        ['/api/v1/assets', '201'],
        ['/api/v1/assets/{node_id}/notes', '201'],
        ['/api/v1/assets/{node_id}/versions', '201'],
        ['/api/v1/approvals/{approval_id}/decide', '200'],
      ];
      for (const [path, ok] of routes) {
        const op = doc.paths[path!]?.post;
        assert.ok(op, path);
        const header = op.parameters.find((p: { in: string; name: string }) => p.in === 'header');
        assert.equal(header?.name, 'idempotency-key', path);
        assert.match(header.description ?? header.schema.description, /24 hours/);
        for (const code of [ok!, '401', '403', '422']) assert.ok(op.responses[code], `${path} ${code}`);
      }
      const versions = doc.paths['/api/v1/assets/{node_id}/versions'].post;
      assert.ok(versions.requestBody.content['multipart/form-data'].schema.properties.file);
      assert.ok(versions.responses['413']);
      assert.ok(doc.paths['/api/v1/approvals/{approval_id}/decide'].post.responses['409']);
    });
  });
}
