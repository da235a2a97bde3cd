import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { planDocument } from '../src/document/import.js';
import { jsonFileSource, loadDocument } from '../src/document/load/index.js';
import { DocumentError, parseDocument } from '../src/document/parse.js';
import { openDocument } from '../src/document/read.js';
import type { ProductionDocument } from '../src/document/schema.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallSeries } from './support/fixtures.js';

/*
 * A JSON document is read as a stream, object by object, in the file's order: what a first
 * import writes from it is what it writes from the same document parsed whole, whatever the
 * order of its sections, and a bad object is refused naming its path, with nothing written.
 */

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** The document with its keys in another order: production last, references before their targets. */
function reordered(doc: ProductionDocument): Record<string, unknown> {
  const { production, ...rest } = doc;
  const keys = Object.keys(rest).reverse();
  return { ...Object.fromEntries(keys.map((k) => [k, rest[k as keyof typeof rest]])), production };
}

for (const dialect of DIALECTS) {
  describe(`a JSON document read as a stream [${dialect}]`, () => {
    let env: TestEnv;
    let n = 0;
    const file = async (doc: unknown, name = `doc-${++n}.json`) => {
      const path = join(env.dir, name);
      await writeFile(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
      return path;
    };
    const load = (path: string) =>
      loadDocument(env.handle.db, jsonFileSource(path), { store: env.store, baseDir: env.dir });
    const written = async (code: string) =>
      (await env.handle.db
        .selectFrom('productions')
        .where('code', '=', code)
        .select('id')
        .executeTakeFirst()) !== undefined;
    before(async () => {
      env = await createEnv(dialect);
    });
    after(() => env.close());

    it('writes what the parsed document writes, in any order of its sections', async () => {
      const doc = smallSeries('streamed');
      const expected = await planDocument(env.handle.db, parseDocument(JSON.stringify(doc)), {
        store: env.store,
        baseDir: env.dir,
      });
      const inOrder = await load(await file(doc));
      assert.deepEqual(inOrder.plan.counts, expected.counts);
      const other = clone(doc);
      other.production.code = 'streamed-reordered';
      const shuffled = await load(await file(reordered(other)));
      assert.deepEqual(shuffled.plan.counts, expected.counts);
      assert.deepEqual(Object.keys(shuffled.refs()).sort(), Object.keys(inOrder.refs()).sort());
      const edges = async (code: string) =>
        (
          await env.handle.db
            .selectFrom('edges as e')
            .innerJoin('nodes as a', 'a.id', 'e.from_node_id')
            .innerJoin('nodes as b', 'b.id', 'e.to_node_id')
            .innerJoin('productions as p', 'p.id', 'e.production_id')
            .where('p.code', '=', code)
            .select(['a.ref as from', 'b.ref as to', 'e.kind', 'e.position'])
            .orderBy('a.ref')
            .orderBy('e.position')
            .execute()
        ).map((e) => `${e.from} ${e.kind} ${e.to} ${e.position}`);
      assert.deepEqual(await edges('streamed-reordered'), await edges('streamed'));
    });

    const refusals: Array<[string, (d: Record<string, unknown>) => unknown, string]> = [
      [
        'an unknown field',
        (d) => (((d.scenes as object[])[1] as Record<string, unknown>).statsu = 'x'),
        'scenes[1].statsu: unknown field.',
      ],
      ['an unknown section', (d) => (d.scnes = []), 'scnes: unknown field.'],
      ['a section that is not a list', (d) => (d.scenes = { a: 1 }), 'scenes: must be an array.'],
      ['no production', (d) => delete d.production, 'production: is required.'],
      [
        'a dangling ref',
        (d) => (((d.scenes as object[])[0] as { assets: string[] }).assets = ['ch-mra']),
        'scenes[0].assets[0]: no object in the document has the ref "ch-mra".',
      ],
      [
        'a ref of the wrong kind',
        (d) => (((d.shoot_days as object[])[0] as { scenes: string[] }).scenes = ['ch-mara']),
        'shoot_days[0].scenes[0]: "ch-mara" is an asset, not a scene.',
      ],
      [
        'a duplicate ref',
        (d) => (((d.people as object[])[1] as { ref: string }).ref = 'p-ana'),
        'people[1].ref: the ref "p-ana" is already used at people[0].ref.',
      ],
    ];
    for (const [what, change, message] of refusals) {
      it(`refuses ${what}, naming the path, and writes nothing`, async () => {
        const doc = clone(smallSeries(`bad-${n + 1}`)) as unknown as Record<string, unknown>;
        change(doc);
        const path = await file(doc);
        await assert.rejects(
          () => load(path),
          (err: Error) => err instanceof DocumentError && err.message === message,
        );
        assert.equal(await written(`bad-${n}`), false);
      });
    }

    it('says why a file cannot be read, and where JSON breaks', async () => {
      const folder = join(env.dir, 'a-folder.json');
      await mkdir(folder);
      await assert.rejects(
        () => openDocument(folder),
        /a-folder\.json: cannot read the file \(it is a folder, not a file, EISDIR\)\.$/,
      );
      await assert.rejects(
        () => openDocument(join(env.dir, 'nope.json')),
        /nope\.json: cannot read the file \(there is no such file, ENOENT\)\.$/,
      );
      const broken = await file('{"production": {"code": "x", "title": "X"}, "scenes": [{"ref": "a",,}]}');
      await assert.rejects(() => load(broken), /doc-\d+\.json: not valid JSON \(.+\)\.$/);
      const cutShort = await file('{"scenes": [], "production": {"code": "x", "title": "X"');
      await assert.rejects(() => openDocument(cutShort), /not valid YAML\/JSON at line 1/);
      const listed = await file('{"production": [{"code": "x", "title": "X"}]}');
      await assert.rejects(() => openDocument(listed), /^DocumentError: production: must be an object\.$/);
    });
  });
}
