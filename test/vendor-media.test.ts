import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { get } from './support/http.js';
import { ALL_SCOPES, png, roundTripDocument, submit, type Refs } from './support/round-trip.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Every non-null `media_id` anywhere in a JSON value. */
function mediaIdsIn(value: unknown, out = new Set<number>()): Set<number> {
  if (Array.isArray(value)) for (const v of value) mediaIdsIn(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'media_id' && typeof v === 'number') out.add(v);
      else mediaIdsIn(v, out);
    }
  }
  return out;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** What each engagement of the round-trip fixture is granted (scene and character bundles). */
const GRANTS: Record<string, { scenes: string[]; characters: string[] }> = {
  'eng-pix': { scenes: ['sc1'], characters: ['ch-mara'] },
  'eng-hal': { scenes: ['sc3'], characters: ['ch-jon'] },
  'eng-read': { scenes: ['sc1'], characters: ['ch-mara'] },
  'eng-rev': { scenes: [], characters: [] },
  'eng-exp': { scenes: [], characters: [] },
  'eng-none': { scenes: [], characters: [] },
};

for (const dialect of DIALECTS) {
  describe(`vendor images: every media_id a bundle shows is fetchable by exactly its engagement [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Refs;
    let wide: string;
    const keys: Record<string, string> = {};
    let submitted: number;

    before(async () => {
      env = await createEnv(dialect);
      const doc = await roundTripDocument('film', env.dir);
      // a reference image on the ward's released version: no bundle lists scene-asset ingredients
      await writeFile(join(env.dir, 'ward-ref.png'), await png('#0f0'));
      const ward = doc.assets!.find((a) => a.ref === 'loc-ward')!;
      ward.versions![0]!.ingredients = [{ kind: 'reference', label: 'Ward ref', media: 'ward-ref.png' }];
      refs = (await env.import(doc, env.dir)).refs;
      wide = await env.mint({ production: 'film' });
      for (const eng of Object.keys(GRANTS)) {
        keys[eng] = await env.mint({ production: 'film', engagement: eng, scopes: ALL_SCOPES });
      }
      const r = await submit(env, keys['eng-pix'], refs['dl-plates']!, [
        { name: 'files', filename: 'comp.png', content: await png('#f0f'), contentType: 'image/png' },
      ]);
      assert.equal(r.statusCode, 200, r.body);
      submitted = JSON.parse(r.body).media[0].id;
    });
    after(() => env.close());

    /** The media ids an engagement's bundles show. */
    async function shownTo(eng: string): Promise<Set<number>> {
      const out = new Set<number>();
      for (const s of GRANTS[eng]!.scenes) {
        const r = await get(env.app, `/api/v1/bundles/scene/${refs[s]}`, keys[eng]);
        assert.equal(r.status, 200);
        mediaIdsIn(r.body, out);
      }
      for (const c of GRANTS[eng]!.characters) {
        const r = await get(env.app, `/api/v1/bundles/character/${refs[c]}`, keys[eng]);
        assert.equal(r.status, 200);
        mediaIdsIn(r.body, out);
      }
      return out;
    }

    it('version summaries and ingredients carry media_id beside media_path, naming the same file', async () => {
      const bundle = (await get(env.app, `/api/v1/bundles/character/${refs['ch-mara']}`, keys['eng-pix']))
        .body;
      const coat = bundle.costumes[0];
      const v1 = coat.released_versions[0];
      assert.equal(typeof v1.media_id, 'number');
      assert.ok(v1.media_path);
      const wool = coat.ingredients.find((i: any) => i.label === 'Black wool');
      assert.equal(typeof wool.media_id, 'number');
      assert.equal(coat.ingredients.find((i: any) => i.label === 'Horn buttons').media_id, null);
      // the id and the path are one file: the metadata's sha256 is the path's file
      const meta = await get(env.app, `/api/v1/media/${v1.media_id}`, wide);
      const ticket = (await get(env.app, '/api/v1/media-ticket', wide)).body.ticket;
      const byPath = await env.app.inject({ method: 'GET', url: `${v1.media_path}?t=${ticket}` });
      assert.equal(byPath.statusCode, 200);
      assert.equal(meta.body.sha256, sha256(byPath.rawPayload));
      const record = (await get(env.app, `/api/v1/assets/${refs['co-coat']}`, wide)).body;
      const released = record.versions.find((v: any) => v.released);
      assert.equal(released.media_id, v1.media_id);
      assert.equal(released.ingredients.find((i: any) => i.label === 'Black wool').media_id, wool.media_id);
    });

    it('each engagement fetches exactly the media its bundles show plus its own submissions; all else is 404', async () => {
      const every = new Set<number>([submitted]);
      const shown: Record<string, Set<number>> = {};
      for (const eng of Object.keys(GRANTS)) {
        shown[eng] = await shownTo(eng);
        for (const id of shown[eng]) every.add(id);
      }
      // the ward reference exists, a production-wide key sees it, yet no bundle shows it
      const wardRef = (await get(env.app, `/api/v1/assets/${refs['loc-ward']}`, wide)).body.versions[0]
        .ingredients[0].media_id as number;
      every.add(wardRef);
      assert.ok(shown['eng-pix']!.size >= 3, 'the fixture shows eng-pix several images');
      assert.ok(shown['eng-hal']!.size >= 1);
      for (const id of every) {
        const meta = await get(env.app, `/api/v1/media/${id}`, wide);
        assert.equal(meta.status, 200, 'a production-wide key sees every media object');
        for (const eng of Object.keys(GRANTS)) {
          const may = shown[eng]!.has(id) || (eng === 'eng-pix' && id === submitted);
          const m = await get(env.app, `/api/v1/media/${id}`, keys[eng]);
          const c = await env.app.inject({
            method: 'GET',
            url: `/api/v1/media/${id}/content`,
            headers: { authorization: `Bearer ${keys[eng]}` },
          });
          if (may) {
            assert.equal(m.status, 200, `${eng} fetches media ${id}`);
            assert.equal(c.statusCode, 200, `${eng} fetches the bytes of ${id}`);
            assert.equal(sha256(c.rawPayload), meta.body.sha256);
          } else {
            assert.equal(m.status, 404, `${eng} must not see media ${id}`);
            assert.deepEqual(m.body, { detail: 'media not found', code: 'not_found' });
            assert.equal(c.statusCode, 404, `${eng} must not fetch the bytes of ${id}`);
          }
        }
      }
      assert.ok(!shown['eng-pix']!.has(wardRef));
    });

    it('a vendor media fetch costs a fixed number of queries', async () => {
      const ids = [...(await shownTo('eng-pix'))];
      const counts: number[] = [];
      for (const id of ids) {
        env.queries.count = 0;
        assert.equal((await get(env.app, `/api/v1/media/${id}`, keys['eng-pix'])).status, 200);
        counts.push(env.queries.count);
      }
      assert.ok(Math.max(...counts) <= 6, `queries: ${counts.join(', ')}`);
    });
  });
}
