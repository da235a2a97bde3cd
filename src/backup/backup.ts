import { copyFile, link, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { Kysely, sql, SqliteDialect } from 'kysely';
import type { Config, DbTarget } from '../config.js';
import { openAndMigrate, openDatabase, type Db } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { FileMediaStore } from '../media/store.js';
import {
  BackupError,
  DATABASE_FILE,
  describeDatabase,
  FORMAT,
  MANIFEST,
  MEDIA_DIR,
  sha256Of,
  writeManifest,
  type Manifest,
  type MediaEntry,
} from './manifest.js';
import { copyTable, countRows, tablesInOrder } from './tables.js';
import { clearAbandoned, flush, refuseFilled, stagingFor } from './staging.js';
import type { BackupStep, OnStep } from './steps.js';
import { folderFor, Undo } from './undo.js';

/** A Kysely over a SQLite file read (or written) by the backup alone, outside the service's own handle. */
export function sqliteFile(db: SQLite.Database): Db {
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: db }) });
}

async function assertProdgraph(db: Db, where: string): Promise<void> {
  const found = await sql`select 1 from productions limit 1`.execute(db).then(
    () => true,
    () => false,
  );
  if (!found) throw new BackupError(`${where} is not a prodgraph database (no productions table)`);
}

/**
 * SQLite: the online backup API copies a consistent snapshot while the server goes on writing
 * (WAL: writers are not held). After a first step, the rest is copied in one step, so a write in
 * between restarts the copy at most once instead of for as long as writes keep coming.
 */
async function copySqlite(path: string, dest: string): Promise<void> {
  let source: SQLite.Database;
  try {
    source = new SQLite(path, { fileMustExist: true });
  } catch (err) {
    throw new BackupError(`cannot open the SQLite database ${path}: ${(err as Error).message}`);
  }
  try {
    await assertProdgraph(sqliteFile(source), path);
    // owner-only like the database it copies (the backup writes into the file it finds)
    await writeFile(dest, '', { mode: 0o600, flag: 'wx' });
    await source.backup(dest, { progress: ({ remainingPages }) => Math.max(100, remainingPages) });
  } finally {
    source.close();
  }
}

/** PostgreSQL: every table read in one repeatable-read, read-only transaction (one snapshot) into a SQLite file migrated to the same schema. */
async function copyPostgres(target: Extract<DbTarget, { dialect: 'postgres' }>, dest: string): Promise<void> {
  const source = openDatabase(target, { poolSize: 1 });
  const copy = await openAndMigrate({ dialect: 'sqlite', path: dest }, { create: true });
  try {
    await assertProdgraph(source.db, describeDatabase(target));
    const tables = await tablesInOrder(copy.db);
    await source.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (snapshot) => {
        await sql`set transaction read only`.execute(snapshot);
        await copy.db.transaction().execute(async (into) => {
          for (const t of tables) await copyTable(snapshot, into, t.name, t.columns);
        });
      });
  } finally {
    await copy.close();
    await source.close();
  }
}

/** Places one media file in the backup: a hard link where the file system allows, a copy otherwise. */
async function placeFile(from: string, to: string): Promise<'linked' | 'copied'> {
  await mkdir(dirname(to), { recursive: true, mode: 0o700 });
  try {
    await link(from, to);
    return 'linked';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK') throw err;
    await copyFile(from, to);
    return 'copied';
  }
}

/**
 * The files the copied database names, into `out/media`. A write's file is moved into place just
 * after its commit, so a file not there yet is looked for again for a moment before it counts
 * as missing. Each file is checked against the checksum its row records.
 */
async function copyMedia(copyDb: Db, mediaDir: string, out: string, onStep?: OnStep<BackupStep>) {
  const store = new FileMediaStore(mediaDir);
  const rows = await copyDb
    .selectFrom('media')
    .select(['storage_key', 'size', 'sha256'])
    .orderBy('id')
    .execute();
  const entries: MediaEntry[] = [];
  const missing: string[] = [];
  let linked = 0;
  for (const r of rows) {
    const from = store.resolveKey(r.storage_key);
    let placed: 'linked' | 'copied' | null = null;
    for (let attempt = 0; from && placed === null && attempt < 10; attempt++) {
      placed = await placeFile(from, join(out, MEDIA_DIR, r.storage_key)).catch(
        (err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
          return null;
        },
      );
      if (placed === null) await sleep(100);
    }
    if (placed === null) {
      missing.push(r.storage_key);
      continue;
    }
    if (placed === 'linked') linked++;
    const sha256 = await sha256Of(join(out, MEDIA_DIR, r.storage_key));
    if (sha256 !== r.sha256)
      throw new BackupError(`media ${r.storage_key}: its bytes do not match the checksum its row records`);
    entries.push({ key: r.storage_key, size: Number(r.size), sha256 });
    await onStep?.('media-file');
  }
  return { entries, missing, linked };
}

/** The points a backup passes, in order: `database` as it begins copying the database, `media` as it begins on the files. */
export type BackupStage = 'database' | 'media';

export interface BackupOptions {
  /**
   * Told of each stage as the backup reaches it; the backup goes on once a returned promise
   * settles (a caller reporting progress, or a test writing at a known point of the backup).
   * At `database` the backup has begun: every write acknowledged before it is in the copy.
   */
  onStage?: (stage: BackupStage) => void | Promise<void>;
  /** Told of every step (finer than the stages: each file, the last step before the rename). */
  onStep?: OnStep<BackupStep>;
}

/** The manifest written, and the staging folders of killed backups into `out` removed before this one began. */
export type BackupResult = Manifest & { cleared: string[] };

/**
 * Takes a backup of the configured database and media folder into `out` (new, or empty). It is
 * built in a staging folder beside `out` and renamed into place whole at the end: `out` is a
 * whole backup or untouched, whether the backup fails or is killed. One that fails removes its
 * staging folder; one that was killed leaves it to the next backup into `out`, which removes it.
 */
export async function takeBackup(
  config: Config,
  out: string,
  version: string,
  options: BackupOptions = {},
): Promise<BackupResult> {
  await refuseFilled(out, 'backup folder');
  const cleared = await clearAbandoned(out, 'backup');
  const undo = new Undo();
  const staging = stagingFor(out, 'backup');
  try {
    await folderFor(dirname(out), undo);
    await mkdir(staging, { mode: 0o700 });
    undo.add(staging, () => rm(staging, { recursive: true, force: true }));
    await options.onStep?.('staging');
    const manifest = await backupInto(config, staging, version, options);
    await options.onStep?.('manifest');
    await flush(join(staging, MANIFEST));
    await flush(staging);
    await moveIntoPlace(staging, out);
    undo.keep();
    await flush(dirname(out));
    return { ...manifest, cleared };
  } catch (err) {
    throw await undo.failed(err);
  }
}

/** The staging folder renamed to `out` (over an empty folder, never over a filled one). */
async function moveIntoPlace(staging: string, out: string): Promise<void> {
  try {
    await rename(staging, out);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST')
      throw new BackupError(`backup folder ${out} is not empty; name a new folder`);
    if (code === 'ENOTDIR') throw new BackupError(`backup folder ${out} is a file; name a new folder`);
    throw err;
  }
}

async function backupInto(
  config: Config,
  out: string,
  version: string,
  { onStage, onStep }: BackupOptions,
): Promise<Manifest> {
  const dbFile = join(out, DATABASE_FILE);
  const takenAt = new Date().toISOString();
  await onStage?.('database');
  await onStep?.('database');
  if (config.db.dialect === 'sqlite') await copySqlite(config.db.path, dbFile);
  else await copyPostgres(config.db, dbFile);

  const copy = await openAndMigrate({ dialect: 'sqlite', path: dbFile }, { create: false });
  let manifest: Manifest;
  try {
    // one file: the copy's log folded in, so the backup is the .db file alone
    await sql`pragma wal_checkpoint(truncate)`.execute(copy.db);
    await sql`pragma journal_mode = delete`.execute(copy.db);
    const tables = (await tablesInOrder(copy.db)).map((t) => t.name);
    await onStage?.('media');
    await onStep?.('media');
    const media = await copyMedia(copy.db, config.mediaDir, out, onStep);
    manifest = {
      format: FORMAT,
      taken_at: takenAt,
      prodgraph: version,
      source: { dialect: config.db.dialect, database: describeDatabase(config.db) },
      database: { file: DATABASE_FILE, size: 0, sha256: '', rows: await countRows(copy.db, tables) },
      media: {
        files: media.entries.length,
        bytes: media.entries.reduce((n, e) => n + e.size, 0),
        linked: media.linked,
        entries: media.entries,
      },
      missing: media.missing,
    };
  } finally {
    await copy.close();
  }
  await flush(dbFile);
  manifest.database.size = (await stat(dbFile)).size;
  manifest.database.sha256 = await sha256Of(dbFile);
  await writeManifest(out, manifest);
  return manifest;
}
