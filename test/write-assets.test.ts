import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call } from './support/http.js';
import { jpeg, upload } from './support/write.js';

for (const dialect of DIALECTS) {
  describe(`POST /assets and notes [${dialect}]`, () => {
    let env: TestEnv;
    let token: string;
    let anaKey: string;
    let readOnly: string;
    let vendor: string;
    let other: string;

    const nodeId = async (ref: string, code = 'film') => {
      const row = await env.handle.db
        .selectFrom('nodes')
        .innerJoin('productions', 'productions.id', 'nodes.production_id')
        .where('productions.code', '=', code)
        .where('nodes.ref', '=', ref)
        .select('nodes.id')
        .executeTakeFirstOrThrow();
      return row.id;
    };
    const count = async (table: 'nodes' | 'activity' | 'version_notes') => {
      const r = await env.handle.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    };
    const post = (
      url: string,
      body: unknown,
      t: string | undefined = token,
      headers?: Record<string, string>,
    ) => call(env.app, 'POST', `/api/v1${url}`, { token: t, body, headers });

    before(async () => {
      env = await createEnv(dialect);
      await env.import(smallProduction('film'));
      await env.import(smallProduction('other'));
      token = await env.mint({ production: 'film', label: 'Pipeline bot' });
      anaKey = await env.mint({ production: 'film', label: 'Ana cart', person: 'p-ana' });
      readOnly = await env.mint({ production: 'film', scopes: ['read'] });
      vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read', 'write'] });
      other = await env.mint({ production: 'other' });
    });
    after(() => env.close());

    describe('POST /assets', () => {
      it('creates an asset: 201, Location, the row shape, defaults, and an activity entry', async () => {
        const before = await count('activity');
        const r = await post('/assets', { label: '  Prop pistol ', department: 'vfx' });
        assert.equal(r.status, 201);
        assert.equal(r.headers.location, `/api/v1/assets/${r.body.node_id}`);
        assert.deepEqual(Object.keys(r.body).sort(), [
          'created_at',
          'department',
          'kind',
          'label',
          'node_id',
          'status',
          'updated_at',
          'versions',
        ]);
        assert.equal(r.body.label, 'Prop pistol');
        assert.equal(r.body.kind, 'asset');
        assert.equal(r.body.status, 'planned');
        assert.equal(r.body.department, 'vfx');
        assert.equal(r.body.versions, 0);

        const row = await env.handle.db
          .selectFrom('nodes')
          .where('id', '=', r.body.node_id)
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.equal(row.label, 'Prop pistol');
        assert.equal(row.kind, 'asset');
        assert.equal(row.updated_at, r.body.updated_at);
        assert.ok(row.position > 0, 'lists after the existing assets');

        assert.equal(await count('activity'), before + 1);
        const entry = await env.handle.db
          .selectFrom('activity')
          .where('node_id', '=', r.body.node_id)
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.equal(entry.actor, 'Pipeline bot');
        assert.equal(entry.verb, 'created');
        assert.match(entry.summary, /Prop pistol/);
        assert.ok(entry.api_key_id);
        assert.equal(entry.person_id, null);
      });

      it('takes kind, status and no department; a person-bound key is named in the feed', async () => {
        const r = await post('/assets', { label: 'Rain coat', kind: 'costume', status: 'active' }, anaKey);
        assert.equal(r.status, 201);
        assert.equal(r.body.kind, 'costume');
        assert.equal(r.body.status, 'active');
        assert.equal(r.body.department, null);
        const entry = await env.handle.db
          .selectFrom('activity')
          .where('node_id', '=', r.body.node_id)
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.equal(entry.actor, 'Ana Ruiz via Ana cart');
        assert.ok(entry.person_id);
      });

      for (const [name, body, field] of [
        ['missing label', { kind: 'prop' }, 'label'],
        ['blank label', { label: '   ' }, 'label'],
        ['empty label', { label: '' }, 'label'],
        ['kind scene', { label: 'Sc 9', kind: 'scene' }, 'kind'],
        ['kind Scene (any case)', { label: 'Sc 9', kind: 'Scene' }, 'kind'],
        ['unknown department', { label: 'X', department: 'catering' }, 'department'],
        [
          "another production's department slug that does not exist here",
          { label: 'X', department: 'sound' },
          'department',
        ],
        ['status outside the vocabulary', { label: 'X', status: 'omitted' }, 'status'],
        ['label not a string', { label: { text: 'X' } }, 'label'],
        ['unknown field', { label: 'X', departmnet: 'vfx' }, 'departmnet'],
      ] as const) {
        it(`422 naming the field, nothing written: ${name}`, async () => {
          const nodes = await count('nodes');
          const activity = await count('activity');
          const r = await post('/assets', body);
          assert.equal(r.status, 422, JSON.stringify(r.body));
          assert.ok(r.body.detail.startsWith(`${field}:`), r.body.detail);
          assert.equal(await count('nodes'), nodes);
          assert.equal(await count('activity'), activity);
        });
      }

      it('400 on malformed JSON, 422 on a missing body', async () => {
        const bad = await env.app.inject({
          method: 'POST',
          url: '/api/v1/assets',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: '{"label": "oops",',
        });
        assert.equal(bad.statusCode, 400);
        assert.deepEqual(Object.keys(JSON.parse(bad.body)), ['detail', 'code']);
        const empty = await env.app.inject({
          method: 'POST',
          url: '/api/v1/assets',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: '',
        });
        assert.equal(empty.statusCode, 400);
      });

      it('401 without a key, 403 for a read-only key and for a vendor key, nothing written', async () => {
        const nodes = await count('nodes');
        assert.equal((await post('/assets', { label: 'X' }, '')).status, 401);
        const ro = await post('/assets', { label: 'X' }, readOnly);
        assert.equal(ro.status, 403);
        assert.match(ro.body.detail, /write/);
        const v = await post('/assets', { label: 'X' }, vendor);
        assert.equal(v.status, 403);
        assert.match(v.body.detail, /engagement/);
        // auth comes before validation
        assert.equal((await post('/assets', { nope: true }, readOnly)).status, 403);
        assert.equal(await count('nodes'), nodes);
      });

      it("creates in the key's own production only", async () => {
        const r = await post('/assets', { label: 'Other prop', department: 'vfx' }, other);
        assert.equal(r.status, 201);
        const row = await env.handle.db
          .selectFrom('nodes')
          .innerJoin('productions', 'productions.id', 'nodes.production_id')
          .where('nodes.id', '=', r.body.node_id)
          .select(['productions.code', 'nodes.department_id'])
          .executeTakeFirstOrThrow();
        assert.equal(row.code, 'other');
        const dept = await env.handle.db
          .selectFrom('departments')
          .where('id', '=', row.department_id!)
          .select('production_id')
          .executeTakeFirstOrThrow();
        const prod = await env.handle.db
          .selectFrom('productions')
          .where('code', '=', 'other')
          .select('id')
          .executeTakeFirstOrThrow();
        assert.equal(dept.production_id, prod.id);
      });
    });

    describe('POST /assets/{node_id}/notes', () => {
      it('lands on the newest version, attributed to the key; bumps updated_at; feed entry', async () => {
        const coat = await nodeId('co-coat');
        const beforeRow = await env.handle.db
          .selectFrom('nodes')
          .where('id', '=', coat)
          .select('updated_at')
          .executeTakeFirstOrThrow();
        const start = env.queries.sql.length;
        const r = await post(`/assets/${coat}/notes`, { text: 'Hem is 2cm short' });
        assert.equal(r.status, 201);
        assert.equal(r.headers.location, undefined);
        if (dialect === 'postgres') {
          const noteSql = env.queries.sql
            .slice(start)
            .filter((q) => /version_notes|activity|versions/.test(q));
          assert.equal(noteSql.length, 1, 'the version lookup, the note and its entry: one round trip');
        }
        assert.equal(r.body.landed_on, 'version');
        assert.equal(r.body.version, 2);
        assert.equal(r.body.author, 'Pipeline bot');
        assert.equal(r.body.text, 'Hem is 2cm short');
        const v2 = await env.handle.db
          .selectFrom('versions')
          .where('node_id', '=', coat)
          .where('version', '=', 2)
          .select('id')
          .executeTakeFirstOrThrow();
        assert.equal(r.body.version_id, v2.id);
        const note = await env.handle.db
          .selectFrom('version_notes')
          .where('id', '=', r.body.id)
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.equal(note.version_id, v2.id);
        assert.equal(note.author, 'Pipeline bot');
        const afterRow = await env.handle.db
          .selectFrom('nodes')
          .where('id', '=', coat)
          .select('updated_at')
          .executeTakeFirstOrThrow();
        assert.ok(afterRow.updated_at > beforeRow.updated_at);
        assert.equal(afterRow.updated_at, r.body.created_at);
        const entry = await env.handle.db
          .selectFrom('activity')
          .where('node_id', '=', coat)
          .where('verb', '=', 'noted')
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.match(entry.summary, /^".+" v2: Hem is 2cm short$/);
        assert.equal(entry.at, r.body.created_at);
        assert.equal(entry.actor, 'Pipeline bot');
      });

      it('free-text author wins; a person-bound key defaults to its person', async () => {
        const coat = await nodeId('co-coat');
        const a = await post(`/assets/${coat}/notes`, { text: 'ok', author: 'Dana (on set)' });
        assert.equal(a.status, 201);
        assert.equal(a.body.author, 'Dana (on set)');
        const b = await post(`/assets/${coat}/notes`, { text: 'ok too' }, anaKey);
        assert.equal(b.body.author, 'Ana Ruiz');
        const c = await post(`/assets/${coat}/notes`, { text: 'blank author', author: '  ' });
        assert.equal(c.body.author, 'Pipeline bot');
      });

      it('version_id aims a note at any version of the asset; one landed on an unreleased version is readable in the record', async () => {
        const coat = await nodeId('co-coat');
        const versions = await env.handle.db
          .selectFrom('versions')
          .where('node_id', '=', coat)
          .select(['id', 'version', 'released'])
          .orderBy('version')
          .execute();
        const v1 = versions.find((v) => v.version === 1)!;
        const aimed = await post(`/assets/${coat}/notes`, {
          text: 'About the first pass',
          version_id: v1.id,
        });
        assert.equal(aimed.status, 201, JSON.stringify(aimed.body));
        assert.equal(aimed.body.version_id, v1.id);
        assert.equal(aimed.body.version, 1);
        // another asset's version, another production's, or none at all: 422, nothing recorded
        const foreign = await env.handle.db
          .selectFrom('versions')
          .where('node_id', '!=', coat)
          .select('id')
          .executeTakeFirstOrThrow();
        const notes = await count('version_notes');
        for (const version_id of [foreign.id, 999_999]) {
          const r = await post(`/assets/${coat}/notes`, { text: 'x', version_id });
          assert.equal(r.status, 422, JSON.stringify(r.body));
          assert.match(r.body.detail, /^version_id: is not a version of asset/);
        }
        assert.equal(await count('version_notes'), notes);

        // a note on an unreleased version: the record shows it on the locked stub
        const landed = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
          token,
          files: [{ name: 'wip.jpg', bytes: await jpeg(4) }],
        });
        assert.equal(landed.status, 201);
        const onWip = await post(`/assets/${coat}/notes`, { text: 'Collar too high' });
        assert.equal(onWip.body.version_id, landed.body.id);
        const record = await call(env.app, 'GET', `/api/v1/assets/${coat}`, { token });
        const stub = record.body.versions.find((v: { id: number }) => v.id === landed.body.id);
        assert.equal(stub.locked, true);
        assert.deepEqual(
          stub.notes.map((n: { text: string }) => n.text),
          ['Collar too high'],
        );
        assert.equal(stub.media_path, undefined, 'the stub still carries no media');
        const first = record.body.versions.find((v: { id: number }) => v.id === v1.id);
        assert.ok(first.notes.some((n: { text: string }) => n.text === 'About the first pass'));
      });

      it('on an asset without versions it lands as an activity entry', async () => {
        const ward = await nodeId('loc-ward');
        const notes = await count('version_notes');
        const r = await post(`/assets/${ward}/notes`, { text: 'Needs a second exit', author: 'Loc scout' });
        assert.equal(r.status, 201);
        assert.equal(r.body.landed_on, 'activity');
        assert.equal(r.body.version_id, null);
        assert.equal(await count('version_notes'), notes);
        const entry = await env.handle.db
          .selectFrom('activity')
          .where('id', '=', r.body.id)
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.equal(entry.node_id, ward);
        assert.equal(entry.verb, 'noted');
        assert.equal(entry.summary, 'Loc scout: Needs a second exit');
        assert.equal(entry.actor, 'Pipeline bot');
      });

      it("404 alike for a scene, an unknown node and another production's asset", async () => {
        const scene = await nodeId('sc1');
        const foreign = await nodeId('co-coat', 'other');
        const activity = await count('activity');
        const answers = await Promise.all(
          [scene, 999999, foreign].map((id) => post(`/assets/${id}/notes`, { text: 'x' })),
        );
        for (const r of answers) {
          assert.equal(r.status, 404);
          assert.deepEqual(r.body, { detail: 'asset not found', code: 'not_found' });
        }
        assert.equal(await count('activity'), activity);
      });

      it('422 for a blank or missing text and a non-integer id; 401/403 before anything', async () => {
        const coat = await nodeId('co-coat');
        const blank = await post(`/assets/${coat}/notes`, { text: ' \n ' });
        assert.equal(blank.status, 422);
        assert.match(blank.body.detail, /^text:/);
        const missing = await post(`/assets/${coat}/notes`, { author: 'x' });
        assert.equal(missing.status, 422);
        assert.match(missing.body.detail, /^text:/);
        const badId = await post('/assets/abc/notes', { text: 'x' });
        assert.equal(badId.status, 422);
        assert.match(badId.body.detail, /node_id/);
        assert.equal((await post(`/assets/${coat}/notes`, { text: 'x' }, '')).status, 401);
        assert.equal((await post(`/assets/${coat}/notes`, { text: 'x' }, readOnly)).status, 403);
        assert.equal((await post(`/assets/${coat}/notes`, { text: 'x' }, vendor)).status, 403);
      });
    });
  });
}
