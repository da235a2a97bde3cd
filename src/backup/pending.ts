import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { DbTarget } from '../config.js';
import { BackupError } from './manifest.js';
import { ownerGone } from './staging.js';

/*
 * A restore moves the media folder into place before its database (a database never exists
 * without its files), so for a moment the media folder is there and the database is not. The
 * folder carries this note until the database is in place; whoever finds the note (a rerun of
 * the restore, `serve`) knows the files belong to a restore, and whether it reached its end.
 */

export const PENDING_FILE = '.prodgraph-restore-pending';

export interface PendingRestore {
  /** The place the database goes: `sqlite:<path>`, or `postgres://host:port/database#schema`. */
  place: string;
  /** Which backup: its database file's SHA-256, and when it was taken. */
  backup: string;
  taken_at: string;
  host: string;
  pid: number;
}

/** A PostgreSQL target's place, as a restore and `serve` both name it (no user, no password). */
export function postgresPlace(url: string, schema: string): string {
  const u = new URL(url);
  return `postgres://${u.hostname}:${u.port || '5432'}${u.pathname}#${schema}`;
}

/** A SQLite target's place. */
export const sqlitePlace = (path: string): string => `sqlite:${path}`;

export async function writePending(mediaDir: string, note: PendingRestore): Promise<void> {
  await writeFile(join(mediaDir, PENDING_FILE), `${JSON.stringify(note)}\n`, { mode: 0o600, flag: 'wx' });
}

export async function removePending(mediaDir: string): Promise<void> {
  await rm(join(mediaDir, PENDING_FILE), { force: true });
}

/** The note in a media folder, or null; one that cannot be read names no place. */
export async function readPending(mediaDir: string): Promise<PendingRestore | null> {
  let raw: string;
  try {
    raw = await readFile(join(mediaDir, PENDING_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return null;
    throw err;
  }
  try {
    return JSON.parse(raw) as PendingRestore;
  } catch {
    return { place: '', backup: '', taken_at: '', host: '', pid: 0 };
  }
}

/** PostgreSQL: the schema a URL works in (where `serve` looks), and whether it holds prodgraph's tables. */
export async function postgresTarget(url: string): Promise<{ schema: string | null; holds: boolean }> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string | null; holds: boolean }>(
      `select current_schema() as schema,
              current_schema() is not null and to_regclass(quote_ident(current_schema()) || '.productions') is not null as holds`,
    );
    return rows[0] ?? { schema: null, holds: false };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Where `target` is, and whether its database is there (a restore's last step puts it there). */
async function placeOf(target: DbTarget): Promise<{ place: string; holds: boolean }> {
  if (target.dialect === 'sqlite') return { place: sqlitePlace(target.path), holds: existsSync(target.path) };
  const { schema, holds } = await postgresTarget(target.url);
  return { place: postgresPlace(target.url, schema ?? ''), holds };
}

/** Every entry of a folder removed, the folder kept. */
async function emptyFolder(dir: string): Promise<void> {
  for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
}

export type Settled =
  /** No note: the folder is nobody's restore. */
  | { state: 'none' }
  /** The restore had put its database in place: the note is removed, the files are that database's (`ours`: `target`'s). */
  | { state: 'finished'; note: PendingRestore; ours: boolean }
  /** The restore never put its database in place: its files are leftovers of a killed run. */
  | { state: 'unfinished'; note: PendingRestore };

/**
 * Reads the note in `mediaDir` for a command about to use it with `target`, and settles what can
 * be: a restore that reached its end loses its note. Refuses (BackupError) a note of a restore
 * still running, and one naming another place whose state cannot be judged from here.
 */
export async function settlePending(mediaDir: string, target: DbTarget): Promise<Settled> {
  const note = await readPending(mediaDir);
  if (!note) return { state: 'none' };
  if (!ownerGone(note.host, note.pid))
    throw new BackupError(
      `${mediaDir} is being filled by a restore still running (${note.host}, pid ${note.pid}); wait for it to end`,
    );
  const here = await placeOf(target);
  let holds: boolean;
  if (note.place === here.place) holds = here.holds;
  else if (note.place.startsWith('sqlite:')) holds = existsSync(note.place.slice('sqlite:'.length));
  else
    throw new BackupError(
      `${mediaDir} holds the files of a restore into ${note.place || 'another database'} that was interrupted: ` +
        `run that restore again (it finishes or clears it), or remove ${mediaDir}`,
    );
  if (!holds) return { state: 'unfinished', note };
  await removePending(mediaDir);
  return { state: 'finished', note, ours: note.place === here.place };
}

/** A killed restore's files, removed from the media folder (the folder itself is kept). */
export async function clearUnfinished(mediaDir: string): Promise<void> {
  await emptyFolder(mediaDir);
}

/**
 * For `serve`, before it opens (and so creates or migrates) the database: a media folder holding
 * the files of a restore that never put its database in place is refused, since serving would
 * make an empty database where the restore's belongs (and a rerun of the restore would then find
 * it in the way). A restore that got to its end only loses its note.
 */
export async function refuseUnfinishedRestore(mediaDir: string, target: DbTarget): Promise<void> {
  const settled = await settlePending(mediaDir, target);
  if (settled.state === 'unfinished')
    throw new BackupError(
      `${mediaDir} holds the files of a restore into ${settled.note.place} that was killed before its database was in place: ` +
        `run that "prodgraph restore" again (it clears them and restores), or remove the folder`,
    );
}
