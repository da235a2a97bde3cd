import { open, readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { BackupError, type Manifest } from './manifest.js';

/*
 * Where a backup or a restore builds what it makes before moving it into place: a hidden folder
 * beside the target (the same file system, so the last step is a rename), named for the target
 * and for the process building it: `.<target>.prodgraph-<backup|restore>.<host>.<pid>`. A run
 * that is killed leaves only such a folder; the next run for the same target removes every one
 * whose process is gone, and nothing reads one as a backup or a database.
 */

export type Builder = 'backup' | 'restore';

const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '-') || 'host';

const prefixOf = (target: string, builder: Builder) => `.${basename(target)}.prodgraph-${builder}.`;

/** This process's staging folder for `target` (a folder or a file path). */
export function stagingFor(target: string, builder: Builder): string {
  return join(dirname(target), `${prefixOf(target, builder)}${HOST}.${process.pid}`);
}

/** Whether a path is a staging folder (of any target): never a backup, never a database. */
export function isStaging(path: string): boolean {
  return /^\..+\.prodgraph-(backup|restore)\.[A-Za-z0-9-]+\.\d+$/.test(basename(path));
}

/** Whether the process a staging name or a note names (`<host>.<pid>`) is known to be gone: on this host, and not running. */
export function ownerGone(host: string, pid: number): boolean {
  if (host !== HOST) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

export const ownTag = (): { host: string; pid: number } => ({ host: HOST, pid: process.pid });

/**
 * Removes the staging folders an earlier run for `target` left when it was killed (its process
 * is gone); answers the paths removed. One of a run still going, or of another host, is left.
 */
export async function clearAbandoned(target: string, builder: Builder): Promise<string[]> {
  const prefix = prefixOf(target, builder);
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  const cleared: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const [, host, pid] = /^([A-Za-z0-9-]+)\.(\d+)$/.exec(name.slice(prefix.length)) ?? [];
    if (host === undefined || !ownerGone(host, Number(pid))) continue;
    const path = join(dirname(target), name);
    await rm(path, { recursive: true, force: true });
    cleared.push(path);
  }
  return cleared;
}

/** A folder to fill: missing, or empty (anything else is refused, untouched). `what` names it in the refusal. */
export async function refuseFilled(dir: string, what: string): Promise<void> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw new BackupError(`${what} ${dir}: ${err.code ?? err.message}`);
  });
  if (entries.length > 0) throw new BackupError(`${what} ${dir} is not empty; name a new folder`);
}

/** Flushes a file or a folder (its entries) to disk, so a rename that follows never outlives it. */
export async function flush(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A database a restore loads in a staging place, then puts in place in one step (its commit). */
export interface StagedDatabase {
  /** Where it goes, as a media folder's note names it. */
  readonly place: string;
  /** Leftovers of killed restores into the same place, removed as it was opened. */
  readonly cleared: string[];
  /** The backup's database into the staging place, checked; answers the rows. */
  load(backupFile: string, manifest: Manifest): Promise<number>;
  commit(): Promise<void>;
  /** After a failure before the commit: the staging place removed. */
  discard(): Promise<void>;
  close(): Promise<void>;
}
