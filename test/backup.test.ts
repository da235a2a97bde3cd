import { ensureSecret } from '../src/auth/signing-repository.js';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { takeBackup, type BackupStage } from '../src/backup/backup.js';
import { BackupError } from '../src/backup/manifest.js';
import { PENDING_FILE, refuseUnfinishedRestore } from '../src/backup/pending.js';
import { restoreBackup } from '../src/backup/restore.js';
import type { RestoreStep } from '../src/backup/steps.js';
import { parseDbTarget, type Config, type DbTarget } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { openAndMigrate } from '../src/db/index.js';
import { FileMediaStore } from '../src/media/store.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { everyWriteDocument, everyWriter, holds, WRITE_KINDS, type Acked } from './support/every-write.js';
import { call } from './support/http.js';
import { dbArgOf } from './support/server-process.js';
import { jpeg, upload } from './support/write.js';

/*
 * Backup while the server writes, restore into a fresh place: every write acknowledged before
 * the backup began is there, its files byte for byte, and the restored database is whole. A
 * restore that fails part-way leaves nothing behind.
 */

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.PRODGRAPH_TEST_PG });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A PostgreSQL schema of the test's own, empty, its URL, and how many tables it holds now. */
async function emptySchema() {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create schema ${schema}`));
  const url = new URL(process.env.PRODGRAPH_TEST_PG!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    schema,
    target: { dialect: 'postgres', url: url.toString() } as DbTarget,
    tables: () =>
      admin((c) => c.query('select count(*)::int as n from pg_tables where schemaname = $1', [schema])).then(
        (r) => r.rows[0].n as number,
      ),
    drop: () => admin((c) => c.query(`drop schema ${schema} cascade`)).then(() => undefined),
  };
}

/** Where the backup stood when a write was sent and when it was acknowledged. */
type Phase = 'before' | BackupStage | 'copying' | 'after';

/** Writes of every kind, one after another, until stopped; each waiter is woken as they are acknowledged. */
function writeLoop(next: () => Promise<Acked>, phase: () => Phase) {
  const acked: Array<Acked & { sent: Phase; at: Phase }> = [];
  const waiters: Array<{ n: number; wake: () => void }> = [];
  let stop = false;
  let failed: Error | undefined;
  const done = (async () => {
    while (!stop) {
      const sent = phase();
      const a = await next();
      acked.push({ ...a, sent, at: phase() });
      for (const w of waiters.filter((w) => acked.length >= w.n)) w.wake();
    }
  })().catch((err: unknown) => {
    failed = err instanceof Error ? err : new Error(String(err));
    for (const w of waiters) w.wake();
  });
  return {
    acked,
    /** Resolves once `n` writes in all were acknowledged; throws the loop's failure. */
    async reached(n: number): Promise<void> {
      if (acked.length < n && failed === undefined)
        await new Promise<void>((wake) => waiters.push({ n, wake }));
      if (failed !== undefined) throw failed;
    },
    async stop(): Promise<void> {
      stop = true;
      await done;
      if (failed !== undefined) throw failed;
    },
  };
}

for (const dialect of DIALECTS) {
  describe(`backup and restore while the server writes [${dialect}]`, () => {
    let env: TestEnv;
    let refs: Record<string, number>;
    let token: string;
    const drops: Array<() => Promise<void>> = [];

    before(async () => {
      env = await createEnv(dialect, { PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.0/8' });
      refs = (await env.import(everyWriteDocument('bk'))).refs;
      token = await env.mint({ production: 'bk', label: 'pipeline', scopes: ['read', 'write'] });
    });
    after(async () => {
      for (const d of drops) await d().catch(() => undefined);
      await env.close();
    });

    /** The env's database as another process names it (PostgreSQL: the URL with its schema). */
    const source = (): Config => ({ ...env.config, db: parseDbTarget(dbArgOf(env)) });

    /** A fresh place to restore into: a SQLite file, and (on PostgreSQL) an empty schema. */
    async function places(tag: string) {
      const out: Array<{ name: string; target: DbTarget; tables?: () => Promise<number> }> = [
        { name: 'sqlite', target: { dialect: 'sqlite', path: join(env.dir, tag, 'restored.db') } },
      ];
      if (dialect === 'postgres') {
        const s = await emptySchema();
        drops.push(s.drop);
        out.push({ name: 'postgres', target: s.target, tables: s.tables });
      }
      return out;
    }

    it('a backup taken mid-stream restores every write of every kind acknowledged before it began, files byte-identical, integrity ok', async () => {
      let phase: Phase = 'before';
      const writer = await everyWriter(env, 'bk', refs);
      const loop = writeLoop(
        () => writer.next(),
        () => phase,
      );
      const K = WRITE_KINDS.length;
      // every kind written before the backup begins
      await loop.reached(K);
      const dir = join(env.dir, 'backup');
      // held at each stage until every kind was written once more, so writes certainly run while
      // it does: acknowledged before it copies the database, and sent once the copy was taken
      const manifest = await takeBackup(source(), dir, 'test', {
        onStage: async (stage) => {
          phase = stage;
          await loop.reached(loop.acked.length + K + 1);
          // what the copy is doing now is not waited on: writes acknowledged meanwhile may or may not be in it
          if (stage === 'database') phase = 'copying';
        },
      }).catch(async (err) => {
        await loop.stop().catch(() => undefined);
        throw err;
      });
      phase = 'after';
      await loop.reached(loop.acked.length + K);
      await loop.stop();
      const { acked } = loop;
      const writtenDuring = acked.filter((a) => a.at !== 'before' && a.at !== 'after').length;
      assert.ok(writtenDuring >= 2 * K, `${writtenDuring} writes while the backup ran`);
      assert.ok(manifest.media.files > 0 && manifest.missing.length === 0, JSON.stringify(manifest.missing));
      assert.equal(manifest.source.dialect, dialect);

      // in the copy: everything acknowledged before the database was copied (while the backup
      // waited to copy it, too); not in it: anything sent once the copy was taken (one snapshot)
      const inCopy = acked.filter((a) => a.at === 'before' || a.at === 'database');
      const afterCopy = acked.filter((a) => a.sent === 'media' || a.sent === 'after');
      assert.deepEqual(new Set(inCopy.map((a) => a.kind)), new Set(WRITE_KINDS));
      assert.deepEqual(new Set(afterCopy.map((a) => a.kind)), new Set(WRITE_KINDS));

      for (const { name, target } of await places('restored')) {
        const media = join(env.dir, `restored-media-${name}`);
        const result = await restoreBackup(dir, target, media);
        assert.equal(result.files, manifest.media.files);
        const restored = await openAndMigrate(target);
        try {
          for (const a of inCopy)
            assert.ok(await holds(restored.db, a), `${name}: ${a.kind} ${a.label} (${a.at}) lost`);
          for (const a of afterCopy)
            assert.ok(
              !(await holds(restored.db, a)),
              `${name}: ${a.kind} ${a.label} sent after the copy, in it`,
            );
          // every file the restored database names: byte for byte the one the server stored
          const files = await restored.db.selectFrom('media').select(['storage_key', 'sha256']).execute();
          const withFiles = inCopy.filter((a) => a.kind === 'version' || a.kind === 'turnover').length;
          assert.ok(files.length >= withFiles, `${files.length} files for ${withFiles} writes with one`);
          for (const m of files) {
            const [original, copy] = await Promise.all([
              readFile(env.store.resolveKey(m.storage_key)!),
              readFile(join(media, m.storage_key)),
            ]);
            assert.ok(original.equals(copy), m.storage_key);
          }
          if (target.dialect === 'sqlite') {
            const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(restored.db);
            assert.deepEqual(check.rows, [{ integrity_check: 'ok' }]);
          }
          // the restored place serves: the same key, a new write (PostgreSQL's ids go on after the restored ones)
          const app = await buildApp({
            config: { ...env.config, db: target, mediaDir: media },
            database: restored,
            store: new FileMediaStore(media),
            logger: false,
          });
          try {
            const r = await call(app, 'POST', '/api/v1/assets', { token, body: { label: 'after restore' } });
            assert.equal(r.status, 201, r.text);
          } finally {
            await app.close();
          }
        } finally {
          await restored.close();
        }
      }
      console.log(
        `backup [${dialect}]: ${acked.length} writes of ${K} kinds acknowledged, ${writtenDuring} of them while the backup ran; ` +
          `${manifest.media.files} files (${manifest.media.linked} hard-linked)`,
      );
    });

    it('restore refuses to overwrite a database or a media folder, and a damaged backup', async () => {
      const dir = join(env.dir, 'backup2');
      await takeBackup(source(), dir, 'test');
      // the live database itself
      const live = source().db;
      await assert.rejects(restoreBackup(dir, live, join(env.dir, 'm-live')), (err: Error) => {
        assert.ok(err instanceof BackupError);
        assert.match(err.message, /refuses to overwrite/);
        return true;
      });
      assert.ok(!existsSync(join(env.dir, 'm-live')), 'a refused restore made its media folder');
      // a media folder with files in it
      await assert.rejects(
        restoreBackup(dir, { dialect: 'sqlite', path: join(env.dir, 'r2.db') }, env.config.mediaDir),
        /is not empty/,
      );
      assert.ok(!existsSync(join(env.dir, 'r2.db')));
      // the backup folder taken again into a non-empty folder
      await assert.rejects(takeBackup(source(), dir, 'test'), /is not empty/);
      // a damaged database file
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      manifest.database.sha256 = '0'.repeat(64);
      await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
      await assert.rejects(
        restoreBackup(dir, { dialect: 'sqlite', path: join(env.dir, 'r3.db') }, join(env.dir, 'm3')),
        /does not match the manifest/,
      );
      assert.ok(!existsSync(join(env.dir, 'r3.db')) && !existsSync(join(env.dir, 'm3')));
    });

    it('a restore that fails after it began writing removes what it made: database file or tables, media folder', async () => {
      for (const seed of [1, 2]) {
        const r = await upload(env.app, `/api/v1/assets/${refs['co-coat']}/versions`, {
          token,
          files: [{ name: 'v.jpg', bytes: await jpeg(seed), type: 'image/jpeg' }],
        });
        assert.equal(r.status, 201, r.text);
      }
      const dir = join(env.dir, 'backup3');
      const manifest = await takeBackup(source(), dir, 'test');
      assert.ok(
        manifest.media.entries.length >= 2,
        'two files at least, so one lands before the damaged one',
      );
      const manifestFile = join(dir, 'manifest.json');
      const original = await readFile(manifestFile, 'utf8');
      const targets = await places('failed');
      const folder = join(env.dir, 'failed');
      const nothingLeft = async (media: string, mediaExisted: boolean) => {
        assert.ok(!existsSync(folder), `the SQLite file's folder was left: ${folder}`);
        for (const t of targets) if (t.tables) assert.equal(await t.tables(), 0, 'tables left in the schema');
        if (mediaExisted) assert.deepEqual(await readdir(media), [], 'files left in the media folder');
        else assert.ok(!existsSync(media), 'the media folder was left');
      };

      // the manifest counts a row the database does not hold: found after the database is written
      const counted = JSON.parse(original);
      counted.database.rows.nodes += 1;
      await writeFile(manifestFile, JSON.stringify(counted));
      for (const { name, target } of targets) {
        const media = join(env.dir, `failed-media-${name}`);
        await assert.rejects(restoreBackup(dir, target, media), (err: Error) => {
          assert.ok(err instanceof BackupError, String(err));
          assert.match(err.message, /^table nodes: \d+ rows restored, the manifest counted \d+$/);
          return true;
        });
        await nothingLeft(media, false);
      }
      await writeFile(manifestFile, original);

      // the last file damaged in the backup (replaced: the backup's files are links to the live ones)
      const last = manifest.media.entries.at(-1)!;
      const damaged = join(dir, 'media', last.key);
      await rm(damaged);
      await writeFile(damaged, Buffer.alloc(last.size, 1));
      for (const { name, target } of targets) {
        const media = join(env.dir, `failed-media2-${name}`);
        await mkdir(media, { mode: 0o700 });
        await assert.rejects(restoreBackup(dir, target, media), (err: Error) => {
          assert.ok(err instanceof BackupError, String(err));
          assert.equal(
            err.message,
            `media ${last.key} does not match the manifest's checksum: the backup is damaged`,
          );
          return true;
        });
        await nothingLeft(media, true);
      }

      // mended, the same places take the restore: nothing of the failed ones was in the way
      await rm(damaged);
      await copyFile(env.store.resolveKey(last.key)!, damaged);
      for (const { name, target } of targets) {
        const r = await restoreBackup(dir, target, join(env.dir, `failed-media2-${name}`));
        assert.equal(r.files, manifest.media.files);
      }
    });

    it('a restore stopped after its commit keeps it all, and its note is settled by serve; stopped before, it leaves nothing', async () => {
      const dir = join(env.dir, 'backup-stopped');
      const manifest = await takeBackup(source(), dir, 'test');
      const stop = (at: RestoreStep) => async (step: RestoreStep) => {
        if (step === at) throw new Error(`stopped at ${step}`);
      };
      for (const { name, target, tables } of await places('stopped')) {
        // failing between the media folder and the database: the folder goes again, no database appears
        const early = join(env.dir, `stopped-early-${name}`);
        await assert.rejects(
          restoreBackup(dir, target, early, { onStep: stop('media-placed') }),
          /stopped at media-placed/,
        );
        assert.ok(!existsSync(early), `${name}: the media folder was left`);
        if (target.dialect === 'sqlite') assert.ok(!existsSync(target.path));
        else assert.equal(await tables!(), 0);

        // failing once the database is in place: everything stays, the note with it
        const late = join(env.dir, `stopped-late-${name}`);
        await assert.rejects(
          restoreBackup(dir, target, late, { onStep: stop('committed') }),
          /stopped at committed/,
        );
        assert.ok(existsSync(join(late, PENDING_FILE)), `${name}: no note`);
        // serve's check finds the database in place: it removes the note and lets serve start
        await refuseUnfinishedRestore(late, target);
        assert.ok(!existsSync(join(late, PENDING_FILE)), `${name}: the note was left`);
        const restored = await openAndMigrate(target);
        try {
          const files = await restored.db.selectFrom('media').select('storage_key').execute();
          assert.equal(files.length, manifest.media.files);
          for (const f of files) assert.ok(existsSync(join(late, f.storage_key)), f.storage_key);
        } finally {
          await restored.close();
        }
      }
    });

    it("PostgreSQL: a schema whose prodgraph tables are all empty takes the restore; another program's table in it stays", async (t) => {
      if (dialect !== 'postgres') return t.skip('PostgreSQL only');
      const dir = join(env.dir, 'backup-empty-tables');
      const manifest = await takeBackup(source(), dir, 'test');
      const s = await emptySchema();
      drops.push(s.drop);
      // what a restore killed before its load left (and what any command makes of an empty schema;
      // serve adds its signing secret)
      const served = await openAndMigrate(s.target);
      await ensureSecret(served.db);
      await served.close();
      const before = await s.tables();
      assert.ok(before >= 40, `${before} tables`);
      const { schema } = s;
      await admin((c) =>
        c.query(`create table ${schema}.their_table (x int); insert into ${schema}.their_table values (7)`),
      );
      const r = await restoreBackup(dir, s.target, join(env.dir, 'empty-tables-media'));
      assert.equal(r.files, manifest.media.files);
      assert.equal(await s.tables(), before + 1);
      const theirs = await admin((c) => c.query(`select x from ${schema}.their_table`));
      assert.deepEqual(theirs.rows, [{ x: 7 }]);
      // and now it holds rows: the next restore is refused
      await assert.rejects(
        restoreBackup(dir, s.target, join(env.dir, 'empty-tables-media2')),
        /already holds a prodgraph database; restore refuses to overwrite it/,
      );
    });

    it('a backup that fails part-way removes what it wrote', async () => {
      const broken: Config = {
        ...env.config,
        db: { dialect: 'sqlite', path: join(env.dir, 'nothing-here.db') },
      };
      const fresh = join(env.dir, 'backup-failed');
      await assert.rejects(takeBackup(broken, fresh, 'test'), /cannot open the SQLite database/);
      assert.ok(!existsSync(fresh), 'a failed backup left its folder');
      const empty = join(env.dir, 'backup-empty');
      await mkdir(empty);
      await assert.rejects(takeBackup(broken, empty, 'test'), /cannot open the SQLite database/);
      assert.deepEqual(await readdir(empty), [], 'a failed backup left files in the folder it was given');
    });
  });
}
