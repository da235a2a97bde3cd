import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { parse } from 'yaml';
import { printTo } from '../src/cli/args.js';
import { run } from '../src/cli/main.js';
import { cliTargets, prodgraphHere } from './support/cli.js';
import { smallProduction } from './support/fixtures.js';
import { jpeg } from './support/write.js';

/** The tables a database (a SQLite file, or a PostgreSQL URL naming its schema) holds. */
async function tablesOf(url: string): Promise<string[]> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!existsSync(path)) return [];
    const db = new SQLite(path, { readonly: true });
    try {
      return db.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ name: string }>(
      'select table_name as name from information_schema.tables where table_schema = current_schema()',
    );
    return r.rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

/** Runs the CLI in this process and returns what it printed (help needs no database). */
async function printed(args: string[]): Promise<string> {
  const chunks: string[] = [];
  const restore = printTo((text) => chunks.push(text));
  try {
    await run(args);
  } finally {
    restore();
  }
  return chunks.join('');
}

describe('prodgraph --help and --version', () => {
  it('explains every command and subcommand, listing every flag, without touching a database', async () => {
    const top = await printed(['--help']);
    for (const flag of [
      '--approved-by',
      '--plan',
      '--replace',
      '--engagement',
      '--person',
      '--own-po',
      '--out',
      '--version',
    ]) {
      assert.ok(top.includes(flag), `the usage names ${flag}`);
    }
    const commands: string[][] = [
      ['serve'],
      ['import'],
      ['export'],
      ['demo'],
      ['keys', 'mint'],
      ['keys', 'list'],
      ['keys', 'revoke'],
      ['engagements', 'list'],
      ['engagements', 'add'],
      ['engagements', 'archive'],
      ['grants', 'list'],
      ['grants', 'add'],
      ['grants', 'revoke'],
      ['storage', 'task'],
      ['secrets', 'rotate'],
    ];
    for (const c of commands) {
      const text = await printed([...c, '--help']);
      assert.match(text, new RegExp(`^usage: prodgraph ${c.join(' ')}`), c.join(' '));
    }
    for (const group of ['keys', 'engagements', 'grants', 'storage', 'secrets']) {
      assert.match(await printed([group, '--help']), new RegExp(`^usage: prodgraph ${group}`));
      assert.match(await printed([group]), new RegExp(`^usage: prodgraph ${group}`));
    }
    assert.match(await printed(['--version']), /^prodgraph \d+\.\d+\.\d+\n$/);
  });
});

for (const target of cliTargets()) {
  describe(`prodgraph engagements, grants, import --plan, export [${target.name}]`, () => {
    let dir: string;
    let env: Record<string, string>;
    let docFile: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'prodgraph-season-'));
      env = { PRODGRAPH_DB: await target.db(dir, 'a'), PRODGRAPH_MEDIA: join(dir, 'media') };
      docFile = join(dir, 'prod.json');
      await writeFile(docFile, JSON.stringify(smallProduction('season')));
      const r = await prodgraphHere(['import', docFile], env);
      assert.equal(r.code, 0, r.stderr);
    });
    after(async () => {
      await target.teardown();
      await rm(dir, { recursive: true, force: true });
    });

    it('grants and revokes vendor access without a re-import, with one-line errors for unknown refs', async () => {
      const added = await prodgraphHere(
        [
          'engagements',
          'add',
          '--production',
          'season',
          '--ref',
          'eng-new',
          '--organisation',
          'org-hal',
          '--departments',
          'vfx',
          '--json',
        ],
        env,
      );
      assert.equal(added.code, 0, added.stderr);
      assert.equal(JSON.parse(added.stdout).source, 'admin');
      const key = await prodgraphHere(
        ['keys', 'mint', '--production', 'season', '--label', 'v', '--engagement', 'eng-new', '--json'],
        env,
      );
      assert.deepEqual(
        JSON.parse(key.stdout).scopes,
        ['read'],
        'a vendor key minted without --scopes gets read',
      );
      const grant = await prodgraphHere(
        ['grants', 'add', '--production', 'season', '--engagement', 'eng-new', '--scene', 'sc1', '--json'],
        env,
      );
      assert.equal(grant.code, 0, grant.stderr);
      const g = JSON.parse(grant.stdout);
      assert.equal(g.live, true);
      const list = await prodgraphHere(
        ['grants', 'list', '--production', 'season', '--engagement', 'eng-new'],
        env,
      );
      assert.match(list.stdout, /^ID\tENGAGEMENT\tKIND\tTARGET/);
      assert.match(list.stdout, new RegExp(`^${g.id}\\teng-new\\tscene\\t"1 INT. WARD - NIGHT"`, 'm'));
      const revoked = await prodgraphHere(['grants', 'revoke', String(g.id), '--production', 'season'], env);
      assert.match(
        revoked.stdout,
        /^revoked grant \d+: scene on "1 INT. WARD - NIGHT" for "eng-new" \(revoked /,
      );
      const archived = await prodgraphHere(
        ['engagements', 'archive', 'eng-new', '--production', 'season'],
        env,
      );
      assert.match(archived.stdout, /^archived engagement "eng-new" \(id \d+\) for Halide FX, archived /);
      const engagements = await prodgraphHere(
        ['engagements', 'list', '--production', 'season', '--all'],
        env,
      );
      assert.match(engagements.stdout, /\teng-new\tHalide FX\tvfx\t0\t1\tadmin\t20\d\d-/);
      for (const [args, message] of [
        [
          ['grants', 'add', '--production', 'season', '--engagement', 'eng-pix', '--scene', 'sc99'],
          'no scene "sc99" in production "season" (name it by its number (e.g. 12A), by its ref, or by node id as id:123)',
        ],
        [
          ['grants', 'add', '--production', 'season', '--engagement', 'eng-nope', '--own-po'],
          'no engagement "eng-nope" in production "season"',
        ],
        [
          [
            'grants',
            'add',
            '--production',
            'season',
            '--engagement',
            'eng-pix',
            '--scene',
            'sc1',
            '--own-po',
          ],
          'name exactly one of --scene, --character, --delivery or --own-po',
        ],
        [
          ['grants', 'add', '--production', 'season', '--engagement', 'eng-new', '--own-po'],
          '--engagement: engagement "eng-new" is archived',
        ],
        [
          ['engagements', 'add', '--production', 'season', '--ref', 'sc1', '--organisation', 'org-pix'],
          '--ref: "sc1" already names a scene or asset in this production',
        ],
        [['grants', 'revoke', '999999', '--production', 'season'], 'grant not found'],
        [
          ['engagements', 'frob'],
          'unknown engagements subcommand "frob" (list, add, archive; see prodgraph engagements --help)',
        ],
      ] as const) {
        const r = await prodgraphHere([...args], env);
        assert.equal(r.code, 1, args.join(' '));
        assert.equal(r.stderr, `prodgraph: ${message}\n`);
      }
      const keys = await prodgraphHere(['keys', 'list', '--production', 'season'], env);
      assert.match(keys.stdout, /^ID\tPREFIX\tLABEL\tSCOPES\tENGAGEMENT\tPERSON\t/);
    });

    it('import --plan prints what a sync would do and changes nothing; the sync then does it', async () => {
      const doc = smallProduction('season');
      doc.scenes![0]!.slugline = 'INT. WARD - DAWN';
      await writeFile(docFile, JSON.stringify(doc));
      const plan = await prodgraphHere(['import', docFile, '--plan', '--json'], env);
      assert.equal(plan.code, 0, plan.stderr);
      const p = JSON.parse(plan.stdout);
      assert.equal(p.counts.scenes.updated, 1);
      const again = await prodgraphHere(['import', docFile, '--plan'], env);
      assert.match(
        again.stdout,
        /^plan for production "season" \(update; nothing has been changed\): scenes 1 updated/,
      );
      assert.match(again.stdout, /^ {2}updated {2}scenes +sc1 \(id \d+\) \[label, slugline\]$/m);
      const refused = await prodgraphHere(['import', docFile], env);
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr,
        'prodgraph: production.code: a production "season" exists already; import with --replace to update it, or with --plan to see what that would change.\n',
      );
      const synced = await prodgraphHere(['import', docFile, '--replace', '--json'], env);
      assert.deepEqual(JSON.parse(synced.stdout).plan.counts, p.counts);
    });

    it('import --plan on a database without our tables plans a creation and creates nothing', async () => {
      const fresh = await target.db(dir, 'plan');
      const r = await prodgraphHere(['import', docFile, '--plan', '--json'], { ...env, PRODGRAPH_DB: fresh });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).production.created, true);
      assert.deepEqual(await tablesOf(fresh), [], 'nothing was created or migrated');
    });

    it('exports the production with its media, and the export imports into an empty database', async () => {
      await mkdir(join(dir, 'backup'));
      const out = join(dir, 'backup', 'season.yaml');
      const r = await prodgraphHere(['export', 'season', '--out', out], env);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^exported production "season" to .*season\.yaml \(\d+ media files in /);
      const doc = parse(await readFile(out, 'utf8'));
      assert.equal(doc.production.code, 'season');
      assert.ok(doc.engagements.some((e: { ref: string }) => e.ref === 'eng-pix'));
      const fresh = { PRODGRAPH_DB: await target.db(dir, 'b'), PRODGRAPH_MEDIA: join(dir, 'media-b') };
      const imported = await prodgraphHere(['import', out, '--json'], fresh);
      assert.equal(imported.code, 0, imported.stderr);
      const plan = await prodgraphHere(['import', out, '--plan', '--json'], fresh);
      assert.equal(plan.code, 0, plan.stderr);
      const counts = JSON.parse(plan.stdout).counts as Record<string, Record<string, number>>;
      for (const [kind, c] of Object.entries(counts)) {
        assert.deepEqual([c.created, c.updated, c.retired, c.deleted, c.kept], [0, 0, 0, 0, 0], kind);
      }
    });

    it('exports readable by the owner alone (0600 files, 0700 folders), into a folder that must exist', async () => {
      const src = join(dir, 'with-media');
      await mkdir(join(src, 'media'), { recursive: true });
      await writeFile(join(src, 'media', 'coat.jpg'), await jpeg(3));
      const doc = smallProduction('owner-only');
      doc.assets![1]!.versions![0]!.media = 'media/coat.jpg';
      await writeFile(join(src, 'prod.json'), JSON.stringify(doc));
      assert.equal((await prodgraphHere(['import', join(src, 'prod.json')], env)).code, 0);

      const missing = join(dir, 'no-such-folder', 'owner-only.yaml');
      const refused = await prodgraphHere(['export', 'owner-only', '--out', missing], env);
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr,
        `prodgraph: --out: there is no folder ${join(dir, 'no-such-folder')} (export creates only the media/ folder beside the document)\n`,
      );
      assert.equal(existsSync(join(dir, 'no-such-folder')), false, 'no folder was created');

      const previous = process.umask(0o022);
      try {
        const into = await mkdtemp(join(dir, 'export-'));
        const out = join(into, 'owner-only.json');
        await writeFile(out, '{}', { mode: 0o644 });
        const r = await prodgraphHere(['export', 'owner-only', '--out', out, '--json'], env);
        assert.equal(r.code, 0, r.stderr);
        const mode = async (p: string) => (await stat(p)).mode & 0o777;
        assert.equal(await mode(out), 0o600, 'the document, even over an older file');
        assert.equal(await mode(join(into, 'media')), 0o700);
        const files = await readdir(join(into, 'media'));
        assert.equal(files.length, 1);
        assert.equal(await mode(join(into, 'media', files[0]!)), 0o600);
        assert.deepEqual((await readdir(into)).sort(), ['media', 'owner-only.json'], 'no partial files left');
      } finally {
        process.umask(previous);
      }
    });
  });
}
