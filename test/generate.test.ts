import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { run } from '../src/cli/main.js';
import { importDocument } from '../src/document/import.js';
import type { ProductionDocument } from '../src/document/schema.js';
import { parseDocument } from '../src/document/parse.js';
import { generateTo, type Tally } from '../src/generate/index.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { cliArgv } from './support/built.js';
import { get } from './support/http.js';

const SCALE = 0.002;

/** The generated document as text, with what it holds. */
async function generated(scale: number, seed: number, format: 'json' | 'yaml' = 'json') {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  const tally = await generateTo(sink, { scale, seed }, format);
  return { text: Buffer.concat(chunks).toString('utf8'), tally };
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('prodgraph generate: the document', () => {
  it('is the same bytes for the same scale and seed, and different for another seed', async () => {
    const a = await generated(SCALE, 7);
    const b = await generated(SCALE, 7);
    const c = await generated(SCALE, 8);
    assert.equal(sha(a.text), sha(b.text));
    assert.notEqual(sha(a.text), sha(c.text));
    assert.deepEqual(a.tally, b.tally);
  });

  it('says the same thing in YAML as in JSON', async () => {
    const json = await generated(SCALE, 3, 'json');
    const yaml = await generated(SCALE, 3, 'yaml');
    assert.deepEqual(parseDocument(yaml.text), JSON.parse(json.text));
  });

  it('grows with the scale: about ten versions an asset, a fifth of them released', async () => {
    const { tally } = await generated(0.01, 1);
    assert.equal(tally.scenes, 30);
    assert.equal(tally.assets, 300);
    assert.ok(tally.versions > 2_400 && tally.versions < 3_600, `versions ${tally.versions}`);
    const share = tally.releasedVersions / tally.versions;
    assert.ok(share > 0.15 && share < 0.25, `released share ${share}`);
    assert.equal(tally.strips, tally.shootDays * 15);
    assert.equal(tally.library, 2_000);
  });

  it('has work vendors sent back on the deliveries they may submit on, once sent out, most of it reviewed', async () => {
    const { text, tally } = await generated(0.1, 1);
    const doc = JSON.parse(text) as ProductionDocument;
    assert.equal(doc.submissions!.length, tally.submissions);
    assert.ok(
      tally.submissions > 10 && tally.reviewedSubmissions > tally.submissions / 2,
      JSON.stringify(tally),
    );
    const status = new Map(doc.deliveries!.map((d) => [d.ref, d.status]));
    const submit = new Set(
      doc.engagements!.flatMap((e) =>
        (e.grants ?? []).flatMap((g) => (g.access === 'submit' ? [`${e.ref}/${g.delivery}`] : [])),
      ),
    );
    for (const s of doc.submissions!) {
      assert.ok(submit.has(`${s.engagement}/${s.delivery}`), `${s.engagement} may submit on ${s.delivery}`);
      assert.ok(['sent', 'accepted'].includes(status.get(s.delivery)!), `${s.delivery} has gone out`);
      if (s.review?.decision === 'accepted') assert.equal(status.get(s.delivery), 'accepted');
    }
  });
});

describe('prodgraph generate: the command', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'prodgraph-generate-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('refuses a bad --scale or --seed with a line naming the flag, and writes nothing', async () => {
    const out = join(dir, 'bad.json');
    for (const [args, message] of [
      [['--scale', '0'], /--scale: "0" is not a number greater than 0/],
      [['--scale', 'abc'], /--scale: "abc"/],
      [['--scale', '11'], /at most 10/],
      [['--scale', '1e3'], /--scale: "1e3"/],
      [[], /--scale is required/],
      [['--scale', '0.01', '--seed', '-1'], /--seed/],
      [['--scale', '0.01', '--seed', '1.5'], /--seed: "1.5"/],
      [['--scale', '0.01', '--seed', '99999999999'], /--seed/],
    ] as const) {
      await assert.rejects(run(['generate', ...args, '--out', out]), message);
    }
    await assert.rejects(
      run(['generate', '--scale', '0.001', '--out', join(dir, 'missing', 'x.json')]),
      /--out: cannot write/,
    );
    assert.deepEqual(await readdir(dir), []);
  });

  it('writes YAML for a .yaml file and JSON on stdout', async () => {
    const file = join(dir, 'season.yaml');
    await run(['generate', '--scale', '0.001', '--seed', '5', '--out', file]);
    const fromFile = parseDocument(await readFile(file, 'utf8'));
    assert.equal(fromFile.production.code, 'generated-5');
    assert.ok(fromFile.scenes!.length > 0 && fromFile.assets!.length > 0);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...(await cliArgv()), 'generate', '--scale', '0.001', '--seed', '5'],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    assert.deepEqual(JSON.parse(stdout), fromFile);
  });
});

/** Rows of one table for the production. */
async function count(env: TestEnv, table: string, where = sql`true`): Promise<number> {
  const { rows } = await sql<{
    n: number | string;
  }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(env.handle.db);
  return Number(rows[0]!.n);
}

/** One generated document (read by the importer's own parser) for every database. */
const fixture = generated(SCALE, 1).then(({ text, tally }) => ({ tally, doc: parseDocument(text) }));

for (const dialect of DIALECTS) {
  describe(`a generated production imports whole [${dialect}]`, () => {
    let env: TestEnv;
    let tally: Tally;
    let refs: Record<string, number>;
    let doc: ReturnType<typeof parseDocument>;
    before(async () => {
      env = await createEnv(dialect);
      ({ tally, doc } = await fixture);
      // the importer's own reader has checked the document once; import what it read
      refs = (
        await importDocument(env.handle.db, structuredClone(doc), { store: env.store, baseDir: env.dir })
      ).refs;
    });
    after(() => env.close());

    it('holds every row the generator wrote', async () => {
      const expected: Array<[string, number, ReturnType<typeof sql>?]> = [
        ['episodes', tally.episodes],
        ['organisations', tally.organisations],
        ['departments', tally.departments],
        ['people', tally.people],
        ['nodes', tally.scenes, sql`kind = 'scene'`],
        ['nodes', tally.assets, sql`kind <> 'scene'`],
        ['versions', tally.versions],
        ['versions', tally.releasedVersions, sql`released = 1`],
        ['ingredients', tally.ingredients],
        ['edges', tally.usesEdges, sql`kind = 'uses'`],
        ['edges', tally.wearsEdges, sql`kind = 'wears'`],
        ['shoot_days', tally.shootDays],
        ['shoot_strips', tally.strips],
        ['approvals', tally.approvals],
        ['approval_steps', tally.approvalSteps],
        ['department_notes', tally.departmentNotes],
        ['deliveries', tally.deliveries],
        ['engagements', tally.engagements],
        ['grants', tally.grants],
        ['work_items', tally.submissions],
        ['work_items', tally.reviewedSubmissions, sql`reviewed_at is not null`],
        ['purchase_orders', tally.purchaseOrders],
        ['cost_reports', tally.costReports],
        ['cost_report_lines', tally.costReportLines],
        ['script_changes', tally.scriptChanges],
        ['activity', tally.activity],
        ['generation_jobs', tally.jobs],
        ['library_files', tally.library],
      ];
      for (const [table, want, where] of expected) {
        assert.equal(await count(env, table, where), want, `${table} ${where ? 'filtered' : ''}`);
      }
      assert.ok(tally.versions > 0 && tally.ingredients > 0 && tally.grants > 0);
    });

    it('maps every node and version ref to the row that carries it', async () => {
      const nodes = await env.handle.db.selectFrom('nodes').select(['id', 'ref']).execute();
      const versions = await env.handle.db.selectFrom('versions').select(['id', 'ref']).execute();
      for (const row of [...nodes, ...versions]) assert.equal(refs[row.ref!], row.id, `ref ${row.ref}`);
      assert.equal(Object.keys(refs).length >= nodes.length + versions.length, true);
    });

    it('answers the API as the document says: stats, the vendor slice, bundles', async () => {
      const code = doc.production.code;
      const wide = await env.mint({ production: code });
      const production = await get(env.app, '/api/v1/production', wide);
      assert.equal(production.status, 200);
      assert.equal(production.body.stats.scenes, tally.scenes);
      assert.equal(production.body.stats.nodes, tally.scenes + tally.assets);

      const vendor = await env.mint({
        production: code,
        engagement: 'e001',
        scopes: ['read', 'submit:turnover', 'read:money'],
      });
      const e001 = doc.engagements!.find((e) => e.ref === 'e001')!;
      const deliveryGrants = e001.grants!.filter((g) => g.kind === 'delivery');
      const turnovers = await get(env.app, '/api/v1/turnovers', vendor);
      assert.equal(turnovers.status, 200);
      assert.deepEqual(
        turnovers.body.map((t: { id: number }) => t.id).sort(),
        deliveryGrants.map((g) => refs[g.delivery!]).sort(),
      );

      const scene = await get(env.app, `/api/v1/bundles/scene/${refs.s00001}`, vendor);
      assert.equal(scene.status, 200);
      const uses = doc.scenes!.find((s) => s.ref === 's00001')!.assets!;
      assert.deepEqual(
        scene.body.assets.map((a: { node_id: number }) => a.node_id),
        uses.map((r) => refs[r]),
      );
      const ungranted = await get(env.app, `/api/v1/bundles/scene/${refs.s00002}`, vendor);
      assert.equal(ungranted.status, 404);

      const character = await get(env.app, `/api/v1/bundles/character/${refs.a00001}`, vendor);
      assert.equal(character.status, 200);
      assert.equal(character.body.costumes.length, 3);

      const orders = await get(env.app, '/api/v1/purchase-orders', vendor);
      assert.equal(orders.status, 200);
      const own = doc.purchase_orders!.filter((o) => o.vendor === 'o001' && o.department);
      assert.equal(orders.body.purchase_orders.length, own.length);
      assert.ok(own.length > 0);
    });
  });
}
