import { constants } from 'node:fs';
import { chmod, copyFile, link, lstat, mkdir, rm, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { sql } from 'kysely';
import { openAndMigrate } from '../db/index.js';
import { BackupError, type Manifest } from './manifest.js';
import { sqlitePlace } from './pending.js';
import { compareRows } from './rows.js';
import { clearAbandoned, flush, stagingFor, type StagedDatabase } from './staging.js';
import { folderFor, type Undo } from './undo.js';

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** SQLite: a restore never writes over a database, nor over the log files of one. */
export async function refuseExistingFile(path: string): Promise<void> {
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    if (await exists(f))
      throw new BackupError(`${f} exists; restore refuses to overwrite a database: name a new file`);
  }
}

/**
 * SQLite: the backup's file is copied into a staging folder beside the target, migrated and
 * checked there, and hard-linked to the target's name at the end: the target appears whole or
 * not at all, and a link never replaces a file that appeared meanwhile.
 */
export class SqliteStaging implements StagedDatabase {
  private readonly folder: string;
  private readonly file: string;

  private constructor(
    private readonly path: string,
    readonly cleared: string[],
  ) {
    this.folder = stagingFor(path, 'restore');
    this.file = join(this.folder, 'prodgraph.db');
  }

  get place(): string {
    return sqlitePlace(this.path);
  }

  static async open(path: string, undo: Undo): Promise<SqliteStaging> {
    await refuseExistingFile(path);
    const staging = new SqliteStaging(path, await clearAbandoned(path, 'restore'));
    await folderFor(dirname(path), undo);
    await mkdir(staging.folder, { mode: 0o700 });
    return staging;
  }

  async load(backupFile: string, manifest: Manifest): Promise<number> {
    await copyFile(backupFile, this.file, constants.COPYFILE_EXCL);
    await chmod(this.file, 0o600);
    // a backup taken by an older version is brought up to this one's schema
    const handle = await openAndMigrate({ dialect: 'sqlite', path: this.file }, { create: false });
    try {
      const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db);
      if (check.rows[0]?.integrity_check !== 'ok')
        throw new BackupError(`${this.path}: integrity_check failed after the restore`);
      const rows = await compareRows(handle.db, manifest);
      // the log folded into the file, so the one file is the whole database when it is linked
      await sql`pragma journal_mode = delete`.execute(handle.db);
      return rows;
    } finally {
      await handle.close();
    }
  }

  async commit(): Promise<void> {
    await flush(this.file);
    try {
      await link(this.file, this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST')
        throw new BackupError(
          `${this.path} exists; restore refuses to overwrite a database: name a new file`,
        );
      throw err;
    }
    await flush(dirname(this.path));
    await unlink(this.file).catch(() => undefined);
  }

  async discard(): Promise<void> {
    await rm(this.folder, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await rm(this.folder, { recursive: true, force: true });
  }
}
