import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { UserError } from '../errors.js';

/** What a backup folder holds: `manifest.json`, the database as a SQLite file, the media files. */
export const MANIFEST = 'manifest.json';
export const DATABASE_FILE = 'prodgraph.db';
export const MEDIA_DIR = 'media';
export const FORMAT = 'prodgraph-backup/1';

export interface MediaEntry {
  key: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  /** When the database copy was taken: every write acknowledged before the backup began is in it. */
  taken_at: string;
  prodgraph: string;
  /** What it was taken from: the dialect, and the SQLite file or the PostgreSQL host and database (no password). */
  source: { dialect: 'sqlite' | 'postgres'; database: string };
  database: { file: string; size: number; sha256: string; rows: Record<string, number> };
  media: { files: number; bytes: number; linked: number; entries: MediaEntry[] };
  /** Files the database names that were not in the media folder when the backup was taken. */
  missing: string[];
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  await writeFile(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
}

/** The manifest of a backup folder, or an error saying what is wrong with it. */
export async function readManifest(dir: string): Promise<Manifest> {
  let raw: string;
  try {
    raw = await readFile(join(dir, MANIFEST), 'utf8');
  } catch {
    throw new BackupError(`${dir} is not a prodgraph backup: no ${MANIFEST}`);
  }
  let m: Manifest;
  try {
    m = JSON.parse(raw) as Manifest;
  } catch {
    throw new BackupError(`${join(dir, MANIFEST)} is not valid JSON`);
  }
  if (m.format !== FORMAT)
    throw new BackupError(`${join(dir, MANIFEST)}: unknown format "${String(m.format)}"`);
  return m;
}

/** A backup or restore refused, in words the operator can act on. */
export class BackupError extends UserError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(detail, 'conflict', options);
  }
}

/** A database named for a manifest or a log line: a path, or a URL without its password. */
export function describeDatabase(
  target: { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string },
) {
  if (target.dialect === 'sqlite') return target.path;
  const url = new URL(target.url);
  if (url.password) url.password = '***';
  url.search = '';
  return url.toString();
}
