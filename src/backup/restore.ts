import { copyFile, link, lstat, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DbTarget } from '../config.js';
import { FileMediaStore } from '../media/store.js';
import { BackupError, DATABASE_FILE, MEDIA_DIR, readManifest, sha256Of, type Manifest } from './manifest.js';
import { clearUnfinished, removePending, settlePending, writePending } from './pending.js';
import { PostgresStaging } from './restore-postgres.js';
import { SqliteStaging } from './restore-sqlite.js';
import {
  clearAbandoned,
  flush,
  isStaging,
  ownTag,
  refuseFilled,
  stagingFor,
  type StagedDatabase,
} from './staging.js';
import type { OnStep, RestoreStep } from './steps.js';
import { folderFor, Undo } from './undo.js';

export interface RestoreResult {
  manifest: Manifest;
  rows: number;
  files: number;
  /** What killed restores into the same places had left, removed before this one began. */
  cleared: string[];
  /** The restore had been run before and reached its end just before it was killed: nothing more was needed. */
  finishedEarlier: boolean;
}

export interface RestoreOptions {
  onStep?: OnStep<RestoreStep>;
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

/** The media files into `staging`, each checked against the manifest's checksum as it lands. */
async function stageMedia(dir: string, staging: string, manifest: Manifest, onStep?: OnStep<RestoreStep>) {
  const store = new FileMediaStore(staging);
  for (const e of manifest.media.entries) {
    const to = store.resolveKey(e.key);
    if (!to) throw new BackupError(`manifest names a media key outside the media folder: ${e.key}`);
    const from = join(dir, MEDIA_DIR, e.key);
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    await link(from, to).catch(() => copyFile(from, to));
    if ((await sha256Of(to)) !== e.sha256)
      throw new BackupError(`media ${e.key} does not match the manifest's checksum: the backup is damaged`);
    await onStep?.('media-file');
  }
}

/** The staged media folder renamed to `mediaDir` (over an empty folder, never a filled one); undone by emptying or removing it. */
async function placeMedia(staging: string, mediaDir: string, undo: Undo): Promise<void> {
  const existed = await exists(mediaDir);
  await folderFor(dirname(mediaDir), undo);
  try {
    await rename(staging, mediaDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST')
      throw new BackupError(`media folder ${mediaDir} is not empty; name a new folder`);
    throw err;
  }
  undo.add(mediaDir, () =>
    existed ? clearUnfinished(mediaDir) : rm(mediaDir, { recursive: true, force: true }),
  );
  await flush(dirname(mediaDir));
}

/**
 * Restores the backup in `dir` into a database that does not exist yet (a SQLite path; a
 * PostgreSQL schema holding no prodgraph rows) and a missing or empty media folder, checking
 * the manifest's checksums and row counts on the way. Both are built in staging places beside
 * their targets and moved into place at the end, the media folder first (marked as a restore's
 * until the database follows), so a database never exists without its files. One that fails
 * removes what it made; one that is killed leaves what the next restore into the same places
 * recognises and clears (or, killed just after its database was in place, completes).
 */
export async function restoreBackup(
  dir: string,
  target: DbTarget,
  mediaDir: string,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  if (isStaging(dir))
    throw new BackupError(
      `${dir} is the staging folder of a backup that was interrupted, not a backup; the next backup into the same folder removes it`,
    );
  const manifest = await readManifest(dir);
  const file = await verifiedCopy(dir, manifest);
  const cleared: string[] = [];
  const settled = await settlePending(mediaDir, target);
  if (settled.state === 'unfinished') {
    await clearUnfinished(mediaDir);
    cleared.push(`${mediaDir} (the files of a restore killed before its database was in place)`);
  }
  cleared.push(...(await clearAbandoned(mediaDir, 'restore')));
  if (settled.state === 'finished' && settled.ours && settled.note.backup === manifest.database.sha256) {
    if (target.dialect === 'sqlite') cleared.push(...(await clearAbandoned(target.path, 'restore')));
    return { manifest, rows: rowsOf(manifest), files: manifest.media.files, cleared, finishedEarlier: true };
  }

  // the refusals first, before anything is written
  await refuseFilled(mediaDir, 'media folder');
  const undo = new Undo();
  let db: StagedDatabase | undefined;
  try {
    db =
      target.dialect === 'sqlite'
        ? await SqliteStaging.open(target.path, undo)
        : await PostgresStaging.open(target, file);
    cleared.push(...db.cleared);
    const staging = stagingFor(mediaDir, 'restore');
    await folderFor(dirname(mediaDir), undo);
    await mkdir(staging, { mode: 0o700 });
    undo.add(staging, () => rm(staging, { recursive: true, force: true }));
    const staged = db;
    undo.add('the staged database', () => staged.discard());
    await options.onStep?.('staging');

    const rows = await db.load(file, manifest);
    await options.onStep?.('database');
    await stageMedia(dir, staging, manifest, options.onStep);
    await writePending(staging, {
      place: db.place,
      backup: manifest.database.sha256,
      taken_at: manifest.taken_at,
      ...ownTag(),
    });
    await flush(staging);
    await options.onStep?.('media');
    await placeMedia(staging, mediaDir, undo);
    await options.onStep?.('media-placed');
    await db.commit();
    undo.keep();
    await options.onStep?.('committed');
    // from here the restore stands whatever happens: a note left behind is settled by the next command
    await removePending(mediaDir).catch(() => undefined);
    return { manifest, rows, files: manifest.media.entries.length, cleared, finishedEarlier: false };
  } catch (err) {
    throw await undo.failed(err);
  } finally {
    await db?.close();
  }
}

const rowsOf = (m: Manifest) => Object.values(m.database.rows).reduce((a, b) => a + b, 0);
