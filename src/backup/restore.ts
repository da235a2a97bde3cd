import { constants } from 'node:fs';
import { chmod, copyFile, link, lstat, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import type { DbTarget } from '../config.js';
import { migrate, openAndMigrate, openDatabase, type Db, type DbHandle } from '../db/index.js';
import { FileMediaStore } from '../media/store.js';
import { sqliteFile } from './backup.js';
import {
  BackupError,
  DATABASE_FILE,
  describeDatabase,
  MEDIA_DIR,
  readManifest,
  sha256Of,
  type Manifest,
} from './manifest.js';
import { copyTable, countRows, resetSequences, tablesInOrder } from './tables.js';
import { folderFor, freshFolder, Undo } from './undo.js';

export interface RestoreResult {
  manifest: Manifest;
  rows: number;
  files: number;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** The backup's own database file, checked against its manifest before anything is written. */
async function verifiedCopy(dir: string, manifest: Manifest): Promise<string> {
  const file = join(dir, DATABASE_FILE);
  if (!(await exists(file))) throw new BackupError(`${dir}: ${DATABASE_FILE} is missing`);
  if ((await sha256Of(file)) !== manifest.database.sha256)
    throw new BackupError(`${file} does not match the manifest's checksum: the backup is damaged`);
  return file;
}

/** SQLite: a restore never writes over a database, nor over the log files of one. */
async function refuseExistingFile(path: string): Promise<void> {
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    if (await exists(f))
      throw new BackupError(`${f} exists; restore refuses to overwrite a database: name a new file`);
  }
}

/** SQLite: the backup's file, copied into place (never over an existing file), then checked whole. */
async function restoreSqlite(file: string, path: string, undo: Undo): Promise<DbHandle> {
  await refuseExistingFile(path);
  await folderFor(dirname(path), undo);
  // EXCL: a file that appeared since the look above is someone else's, neither overwritten nor removed
  await copyFile(file, path, constants.COPYFILE_EXCL);
  undo.add(path, async () => {
    for (const f of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) await rm(f, { force: true });
  });
  await chmod(path, 0o600);
  // a backup taken by an older version is brought up to this one's schema
  const handle = await openAndMigrate({ dialect: 'sqlite', path }, { create: false });
  const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db);
  if (check.rows[0]?.integrity_check !== 'ok') {
    await handle.close();
    throw new BackupError(`${path}: integrity_check failed after the restore`);
  }
  return handle;
}

/** PostgreSQL: the tables of the schema a connection works in. */
async function tablesHere(db: Db): Promise<string[]> {
  const { rows } = await sql<{ t: string }>`
    select tablename as t from pg_tables where schemaname = current_schema()`.execute(db);
  return rows.map((r) => r.t);
}

/** PostgreSQL: drops the tables made since `before` was listed (the migrations' and the load's). */
async function dropTablesSince(target: Extract<DbTarget, { dialect: 'postgres' }>, before: Set<string>) {
  const handle = openDatabase(target, { poolSize: 1 });
  try {
    const made = (await tablesHere(handle.db)).filter((t) => !before.has(t));
    if (made.length > 0)
      await sql`drop table if exists ${sql.join(made.map((t) => sql.table(t)))} cascade`.execute(handle.db);
  } finally {
    await handle.close();
  }
}

/** PostgreSQL: a schema with no prodgraph tables, migrated, then every table's rows loaded in one transaction. */
async function restorePostgres(
  file: string,
  target: Extract<DbTarget, { dialect: 'postgres' }>,
  undo: Undo,
): Promise<DbHandle> {
  const handle = openDatabase(target, { poolSize: 2 });
  const backup = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const { rows } = await sql<{ t: string | null }>`select to_regclass('productions')::text as t`.execute(
      handle.db,
    );
    if (rows[0]?.t)
      throw new BackupError(
        `${describeDatabase(target)} already holds a prodgraph database; restore refuses to overwrite it: name an empty database or schema`,
      );
    // another program's tables may share the schema: only the ones the restore makes are its own
    const before = new Set(await tablesHere(handle.db));
    undo.add(`the tables restored into ${describeDatabase(target)}`, () => dropTablesSince(target, before));
    await migrate(handle.db, 'postgres');
    const from = sqliteFile(backup);
    const tables = await tablesInOrder(from);
    await handle.db.transaction().execute(async (into) => {
      // the empty tables the migrations made, but a migration may seed rows: the backup's win
      for (const t of [...tables].reverse()) await sql`delete from ${sql.table(t.name)}`.execute(into);
      for (const t of tables) await copyTable(from, into, t.name, t.columns);
      await resetSequences(into, 'postgres', tables);
    });
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  } finally {
    backup.close();
  }
}

/** The rows of every table the manifest counted, compared: a restore that lost a row says so. */
async function compareRows(db: Db, manifest: Manifest): Promise<number> {
  const tables = Object.keys(manifest.database.rows);
  const now = await countRows(db, tables);
  for (const t of tables) {
    if (now[t] !== manifest.database.rows[t])
      throw new BackupError(
        `table ${t}: ${now[t]} rows restored, the manifest counted ${manifest.database.rows[t]}`,
      );
  }
  return tables.reduce((n, t) => n + (now[t] ?? 0), 0);
}

/** The media files, each checked against the manifest's checksum as it lands. */
async function restoreMedia(dir: string, mediaDir: string, manifest: Manifest, undo: Undo): Promise<number> {
  await freshFolder(mediaDir, 'media folder', undo);
  const store = new FileMediaStore(mediaDir);
  for (const e of manifest.media.entries) {
    const to = store.resolveKey(e.key);
    if (!to) throw new BackupError(`manifest names a media key outside the media folder: ${e.key}`);
    const from = join(dir, MEDIA_DIR, e.key);
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    await link(from, to).catch(() => copyFile(from, to));
    if ((await sha256Of(to)) !== e.sha256)
      throw new BackupError(`media ${e.key} does not match the manifest's checksum: the backup is damaged`);
  }
  return manifest.media.entries.length;
}

/**
 * Restores the backup in `dir` into a database that does not exist yet (a SQLite path; a
 * PostgreSQL database or schema without prodgraph tables) and an empty media folder, checking
 * the manifest's checksums and row counts on the way. Nothing live is ever overwritten, and a
 * restore that fails part-way removes what it made (the SQLite file, the PostgreSQL tables, the
 * media folder or what went into it): the place is as it was, or restored whole.
 */
export async function restoreBackup(dir: string, target: DbTarget, mediaDir: string): Promise<RestoreResult> {
  const manifest = await readManifest(dir);
  const file = await verifiedCopy(dir, manifest);
  // the refusals first, before anything is written
  if (await exists(mediaDir)) await freshFolder(mediaDir, 'media folder');
  if (target.dialect === 'sqlite') await refuseExistingFile(target.path);
  const undo = new Undo();
  let handle: DbHandle | undefined;
  try {
    handle =
      target.dialect === 'sqlite'
        ? await restoreSqlite(file, target.path, undo)
        : await restorePostgres(file, target, undo);
    const rows = await compareRows(handle.db, manifest);
    const files = await restoreMedia(dir, mediaDir, manifest, undo);
    return { manifest, rows, files };
  } catch (err) {
    // closed before its file or tables are removed
    await handle?.close().catch(() => undefined);
    handle = undefined;
    throw await undo.failed(err);
  } finally {
    await handle?.close();
  }
}
