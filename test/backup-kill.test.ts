import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp, type App } from '../src/app.js';
import { PENDING_FILE } from '../src/backup/pending.js';
import { isStaging } from '../src/backup/staging.js';
import { parseDbTarget } from '../src/config.js';
import { openAndMigrate, openDatabase } from '../src/db/index.js';
import { FileMediaStore } from '../src/media/store.js';
import { cliArgv } from './support/built.js';
import { cliTargets, prodgraph, prodgraphHere, type Run } from './support/cli.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { get } from './support/http.js';
import { DEMOS, loadDemo } from './support/read.js';
import { dbArgOf, freePort } from './support/server-process.js';

/*
 * `prodgraph backup` and `prodgraph restore` as processes of their own, SIGKILLed at every step
 * they pass (PRODGRAPH_TEST_PAUSE_AT stops one at a named step and says so: the kill lands at
 * exactly that point, known from the process's own output), then run again as a user would:
 * the rerun succeeds, nothing the killed run left remains, and the restored production answers
 * every read exactly as the one backed up. Which file the media steps are killed at is drawn
 * from a seeded generator (PRODGRAPH_KILL_SEED; the seed is printed).
 */

const SEED = Number(process.env.PRODGRAPH_KILL_SEED ?? Date.now() % 100_000);

/** mulberry32: a small seeded generator, so a failing draw can be run again. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A command started with a pause point: resolves once it says it is paused there (it never goes on). */
async function pausedAt(args: string[], step: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [...(await cliArgv()), ...args], {
    env: { ...process.env, PRODGRAPH_DB: '', PRODGRAPH_MEDIA: '', ...env, PRODGRAPH_TEST_PAUSE_AT: step },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  await new Promise<void>((resolve, reject) => {
    const hear = (chunk: Buffer) => {
      output += chunk.toString();
      // the command names the first time a step is reached without its count (`media-file`, not `media-file:1`)
      if (output.includes(`prodgraph: paused at ${step.replace(/:1$/, '')}\n`)) resolve();
    };
    child.stdout.on('data', hear);
    child.stderr.on('data', hear);
    void exited.then((how) => reject(new Error(`${args[0]} ended (${how}) before ${step}:\n${output}`)));
  });
  return {
    async kill(): Promise<void> {
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');
    },
  };
}

/** The staging folders beside a path made for it (a killed run's, or a run's that did not clean up). */
async function stagingBeside(path: string): Promise<string[]> {
  return (await readdir(dirname(path)).catch(() => [] as string[])).filter(
    (n) => isStaging(n) && n.startsWith(`.${basename(path)}.prodgraph-`),
  );
}

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: ${r.stdout}${r.stderr}`);

/** Reads a production answers with a production-wide key, compared between the source and a restore. */
const READS = [
  '/api/v1/production',
  '/api/v1/departments',
  '/api/v1/people',
  '/api/v1/scenes',
  '/api/v1/assets?limit=200',
  '/api/v1/schedule',
  '/api/v1/deliveries',
  '/api/v1/approvals',
  '/api/v1/script-changes',
  '/api/v1/activity',
  '/api/v1/changes?limit=200',
  '/api/v1/admin/engagements',
  '/api/v1/admin/grants?include_inactive=true',
];

for (const dialect of DIALECTS) {
  describe(`backup and restore killed at every step, then run again [${dialect}]`, () => {
    let env: TestEnv;
    let cli: Record<string, string>;
    let token: string;
    let sceneIds: number[];
    let mediaFiles: number;
    const place = cliTargets().find((t) => t.name === dialect)!;
    const draw = seeded(SEED);

    before(async () => {
      env = await createEnv(dialect);
      const imported = await loadDemo(env, 'episodic');
      token = await env.mint({
        production: DEMOS.episodic.code,
        label: 'kill test',
        scopes: ['read', 'admin'],
      });
      sceneIds = Object.entries(imported.refs)
        .filter(([ref]) => /^sc\d/.test(ref))
        .map(([, id]) => id);
      mediaFiles = Number(
        (
          await env.handle.db
            .selectFrom('media')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      assert.ok(mediaFiles >= 4, `${mediaFiles} media files`);
      cli = { PRODGRAPH_DB: dbArgOf(env), PRODGRAPH_MEDIA: env.config.mediaDir };
      console.log(`kill points drawn with PRODGRAPH_KILL_SEED=${SEED}`);
    });
    after(async () => {
      await place.teardown();
      await env.close();
    });

    /** The media step killed at a drawn file: 1 to the number of files. */
    const someFile = () => `media-file:${1 + Math.floor(draw() * mediaFiles)}`;

    /** Whether a restore target holds anything: the SQLite file, or tables in the PostgreSQL schema. */
    async function holdsAnything(db: string): Promise<boolean> {
      const target = parseDbTarget(db);
      if (target.dialect === 'sqlite') return existsSync(target.path);
      const handle = openDatabase(target, { poolSize: 1 });
      try {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_tables where schemaname = current_schema()`.execute(handle.db);
        return rows[0]!.n > 0;
      } finally {
        await handle.close();
      }
    }

    /** PostgreSQL: staging schemas of restores into the target's schema. */
    async function stagingSchemas(db: string): Promise<number> {
      const target = parseDbTarget(db);
      if (target.dialect === 'sqlite') return 0;
      const handle = openDatabase(target, { poolSize: 1 });
      try {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_namespace
          where nspname like 'prodgraph_restore_%'
            and obj_description(oid, 'pg_namespace') like '%into schema ' || current_schema() || ';%'`.execute(
          handle.db,
        );
        return rows[0]!.n;
      } finally {
        await handle.close();
      }
    }

    /** Every read answered alike by the source and the restored place, and every file byte for byte. */
    async function answersLikeTheSource(db: string, media: string): Promise<void> {
      const target = parseDbTarget(db);
      const handle = await openAndMigrate(target);
      let restored: App | undefined;
      try {
        restored = await buildApp({
          config: { ...env.config, db: target, mediaDir: media },
          database: handle,
          store: new FileMediaStore(media),
          logger: false,
        });
        const reads = [...READS, ...sceneIds.slice(0, 3).map((id) => `/api/v1/bundles/scene/${id}`)];
        for (const url of reads) {
          const was = await get(env.app, url, token);
          const now = await get(restored, url, token);
          assert.equal(was.status, 200, `${url}: ${was.text}`);
          assert.equal(now.status, was.status, `${url}: ${now.text}`);
          assert.equal(now.text, was.text, `${url} answers otherwise after the restore`);
        }
        const files = await handle.db.selectFrom('media').select('storage_key').execute();
        assert.equal(files.length, mediaFiles);
        for (const f of files) {
          const [original, copy] = await Promise.all([
            readFile(env.store.resolveKey(f.storage_key)!),
            readFile(join(media, f.storage_key)),
          ]);
          assert.ok(original.equals(copy), f.storage_key);
        }
        assert.ok(!existsSync(join(media, PENDING_FILE)), 'the restore note was left in the media folder');
      } finally {
        await restored?.close();
        await handle.close();
      }
    }

    it('a backup killed at any step leaves its folder untouched; the rerun removes what it left and backs up whole', async () => {
      for (const step of ['staging', 'database', 'media', someFile(), 'manifest']) {
        const out = join(env.dir, `killed-backup-${step.replace(':', '-')}`);
        const run = await pausedAt(['backup', '--out', out], step, cli);
        assert.ok(!existsSync(out), `${step}: the backup folder exists before the backup ended`);
        await run.kill();
        const [left] = await stagingBeside(out);
        assert.ok(left, `${step}: no staging folder left by the killed backup`);
        // what a killed backup left is never taken for a backup, even once its manifest is written
        const notABackup = await prodgraphHere(
          [
            'restore',
            join(dirname(out), left),
            '--db',
            await place.db(env.dir, 'never'),
            '--media',
            join(env.dir, 'never'),
          ],
          {},
        );
        assert.match(
          notABackup.stderr,
          /is the staging folder of a backup that was interrupted, not a backup/,
        );

        const again = await prodgraph(['backup', '--out', out, '--json'], cli);
        ok(again, `${step}: the rerun`);
        const m = JSON.parse(again.stdout);
        assert.deepEqual(m.cleared, [join(dirname(out), left)]);
        assert.deepEqual(await stagingBeside(out), [], `${step}: staging left after the rerun`);
        assert.equal(m.media.files, mediaFiles);
        assert.deepEqual((await readdir(out)).sort(), ['manifest.json', 'media', 'prodgraph.db']);
      }
    });

    it('a restore killed at any step leaves no database without its files; the rerun restores a production that answers like the source', async () => {
      const backup = join(env.dir, 'for-restores');
      ok(await prodgraphHere(['backup', '--out', backup], cli), 'the backup');
      for (const step of ['staging', 'database', someFile(), 'media', 'media-placed', 'committed']) {
        const tag = `k${step.replace(/[:-]/g, '')}`;
        const db = await place.db(env.dir, tag);
        const media = join(env.dir, `${tag}-media`);
        const run = await pausedAt(['restore', backup, '--db', db, '--media', media], step, {});
        const placed = step === 'media-placed' || step === 'committed';
        assert.equal(await holdsAnything(db), step === 'committed', `${step}: the database, before the end`);
        assert.equal(existsSync(media), placed, `${step}: the media folder`);
        if (placed)
          assert.ok(existsSync(join(media, PENDING_FILE)), `${step}: the media folder carries no note`);
        await run.kill();

        if (step === 'media-placed') {
          // serve refuses the files of a restore that never put its database in place, and makes none
          const port = String(await freePort());
          const served = await prodgraph(['serve', '--db', db, '--media', media, '--port', port], {});
          assert.equal(served.code, 1, served.stdout + served.stderr);
          assert.match(
            served.stderr,
            /holds the files of a restore into \S+ that was killed before its database was in place/,
          );
          assert.equal(await holdsAnything(db), false, 'serve made a database where the restore goes');
        }

        const again = await prodgraph(['restore', backup, '--db', db, '--media', media, '--json'], {});
        ok(again, `${step}: the rerun`);
        const r = JSON.parse(again.stdout);
        assert.equal(r.finished_earlier, step === 'committed', `${step}: ${again.stdout}`);
        assert.equal(r.files, mediaFiles);
        assert.ok(r.cleared.length > 0 || step === 'committed', `${step}: the rerun cleared nothing`);
        assert.deepEqual(await stagingBeside(media), [], `${step}: staging left beside the media folder`);
        const target = parseDbTarget(db);
        if (target.dialect === 'sqlite') assert.deepEqual(await stagingBeside(target.path), []);
        assert.equal(await stagingSchemas(db), 0, `${step}: a staging schema was left`);
        await answersLikeTheSource(db, media);
      }
    });
  });
}
