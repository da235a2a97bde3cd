import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTypeFromBuffer } from 'file-type';
import type { MediaKind } from '../domain/vocabulary.js';
import { errors } from '../errors.js';

/**
 * Where media bytes live. Writes are staged under a temporary name and only made permanent
 * by `commit()` after the database transaction that references them has committed, so a
 * failed write leaves no stored bytes behind (`discard()`). Writes go through `commitStaged`.
 */
export interface MediaStore {
  stage(productionId: number, source: Readable, options?: StageOptions): Promise<StagedObject>;
  open(key: string, range?: ByteRange): Promise<Readable>;
  stat(key: string): Promise<StoredStat | null>;
  delete(key: string): Promise<void>;
  /** Absolute location of a key, or null if the key would escape the store. */
  resolveKey(key: string): string | null;
}

/** A stored file as a download answers it (sendMedia). */
export interface ServedMedia {
  storageKey: string;
  contentType: string;
  sha256: string;
  /** The media's label, offered as the download's file name. */
  label: string;
}

export interface StageOptions {
  /** Refuse (413) once more than this many bytes have arrived; nothing larger is ever buffered. */
  maxBytes?: number;
  /** File name as sent, used only for the extension of the stored key. */
  filename?: string;
}

export interface StagedObject {
  key: string;
  size: number;
  sha256: string;
  contentType: string;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredStat {
  size: number;
  mtime: Date;
}

const SNIFF_BYTES = 4100;

const extOf = (contentType: string, filename?: string): string => {
  const fromType = contentType.split('/')[1]?.replace(/[^a-z0-9]/g, '');
  if (contentType !== 'application/octet-stream' && fromType) return fromType === 'jpeg' ? 'jpg' : fromType;
  return filename?.toLowerCase().match(/\.([a-z0-9]{1,8})$/)?.[1] ?? 'bin';
};

/** Media kind shown in the API, from the sniffed content type. */
export const mediaKindOf = (contentType: string): MediaKind => {
  const top = contentType.split('/')[0];
  if (top === 'image' || top === 'video' || top === 'audio') return top;
  if (contentType === 'application/pdf') return 'document';
  return 'file';
};

export async function sniffContentType(head: Buffer): Promise<string> {
  const found = await fileTypeFromBuffer(head);
  return found?.mime ?? 'application/octet-stream';
}

/** Owner-only: the store holds a production's unreleased material. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** A staged file's name carries the key it will take, so recovery knows where it belongs. */
const stagedNameOf = (key: string): string => encodeURIComponent(key);
const keyOfStagedName = (name: string): string | null => {
  if (name.endsWith('.part')) return null;
  try {
    const key = decodeURIComponent(name);
    return key.includes('/') ? key : null;
  } catch {
    return null;
  }
};

/** One staging folder per process: `<host>.<pid>.<random>`, so a restart knows whose files are whose. */
const ownerOf = (name: string): { host: string; pid: number } | null => {
  const [, host, pid] = /^(.+)\.(\d+)\.[a-f0-9]{8}$/.exec(name) ?? [];
  return host === undefined ? null : { host, pid: Number(pid) };
};

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Staged files of a process that died mid-write, and whether each names a key. */
export interface AbandonedStaging {
  dir: string;
  files: Array<{ path: string; key: string | null }>;
}

export class FileMediaStore implements MediaStore {
  readonly root: string;
  private readonly staging: string;
  private readonly ownStaging: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.staging = join(this.root, '.staging');
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '-') || 'host';
    this.ownStaging = join(this.staging, `${host}.${process.pid}.${randomBytes(4).toString('hex')}`);
  }

  resolveKey(key: string): string | null {
    if (key.includes('\0') || key.startsWith('/') || key.startsWith('\\')) return null;
    const full = resolve(this.root, key);
    const rel = relative(this.root, full);
    if (rel === '' || rel.startsWith('..') || rel.split(sep).includes('..') || rel.startsWith('.staging')) {
      return null;
    }
    return full;
  }

  async stage(productionId: number, source: Readable, options: StageOptions = {}): Promise<StagedObject> {
    await mkdir(this.ownStaging, { recursive: true, mode: DIR_MODE });
    const part = join(this.ownStaging, `${randomUUID()}.part`);
    const hash = createHash('sha256');
    const headChunks: Buffer[] = [];
    let headLen = 0;
    let size = 0;
    const max = options.maxBytes;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (max !== undefined && size > max) {
          done(errors.tooLarge(`file is larger than the limit of ${max} bytes`));
          return;
        }
        hash.update(chunk);
        if (headLen < SNIFF_BYTES) {
          headChunks.push(chunk);
          headLen += chunk.length;
        }
        done(null, chunk);
      },
    });
    let tmp = part;
    try {
      // flush: the bytes reach the disk before the row that names them can commit
      await pipeline(source, meter, createWriteStream(part, { flags: 'wx', mode: FILE_MODE, flush: true }));
      // a stream truncated by a size limit upstream (multipart) ends without an error
      if ((source as Readable & { truncated?: boolean }).truncated) {
        throw errors.tooLarge(`file is larger than the limit of ${max ?? 'the configured'} bytes`);
      }
      const contentType = await sniffContentType(Buffer.concat(headChunks).subarray(0, SNIFF_BYTES));
      const id = randomUUID();
      const key = `${productionId}/${id.slice(0, 2)}/${id}.${extOf(contentType, options.filename)}`;
      const named = join(this.ownStaging, stagedNameOf(key));
      await rename(part, named);
      tmp = named;
      return this.staged(key, tmp, size, hash.digest('hex'), contentType);
    } catch (err) {
      await Promise.all([rm(part, { force: true }), rm(tmp, { force: true })]);
      throw err;
    }
  }

  private staged(key: string, tmp: string, size: number, sha256: string, contentType: string): StagedObject {
    let settled = false;
    return {
      key,
      size,
      sha256,
      contentType,
      commit: async () => {
        if (settled) return;
        await this.place(tmp, key);
        settled = true;
      },
      discard: async () => {
        if (settled) return;
        settled = true;
        await rm(tmp, { force: true });
      },
    };
  }

  /** Moves staged bytes to their key's place (the last step of a write, or recovery's). */
  async place(tmp: string, key: string): Promise<void> {
    const final = join(this.root, key);
    await mkdir(dirname(final), { recursive: true, mode: DIR_MODE });
    try {
      await rename(tmp, final);
    } catch (err) {
      // another process's recovery placed it first
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await this.stat(key))) return;
      throw err;
    }
  }

  /**
   * Staging folders whose process is gone (same host, pid not running, or this very pid from
   * an earlier life) or that have not been touched for `olderThanMs` (another host's, or a
   * reused pid's). Files of live processes are never listed.
   */
  async abandonedStaging(olderThanMs = 24 * 3600 * 1000): Promise<AbandonedStaging[]> {
    let names: string[];
    try {
      names = await readdir(this.staging);
    } catch {
      return [];
    }
    const here = hostname().replace(/[^A-Za-z0-9-]/g, '-') || 'host';
    const cutoff = Date.now() - olderThanMs;
    const out: AbandonedStaging[] = [];
    for (const name of names) {
      const dir = join(this.staging, name);
      if (dir === this.ownStaging) continue;
      const s = await stat(dir).catch(() => null);
      if (!s) continue;
      if (!s.isDirectory()) {
        // a loose file from before per-process folders: a write that died mid-flight
        if (s.mtimeMs < cutoff) out.push({ dir: '', files: [{ path: dir, key: null }] });
        continue;
      }
      const owner = ownerOf(name);
      const dead =
        owner !== null && owner.host === here && (owner.pid === process.pid || !processIsAlive(owner.pid));
      if (!dead && s.mtimeMs >= cutoff) continue;
      const files = (await readdir(dir).catch(() => [] as string[])).map((f) => ({
        path: join(dir, f),
        key: keyOfStagedName(f),
      }));
      out.push({ dir, files });
    }
    return out;
  }

  async removeStaged(path: string): Promise<void> {
    await rm(path, { force: true });
  }

  /** Drops an abandoned staging folder once its files are settled (a no-op while one remains). */
  async removeStagingDir(dir: string): Promise<void> {
    if (dir) await rmdir(dir).catch(() => undefined);
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    const full = this.resolveKey(key);
    if (!full) throw errors.notFound('media');
    return createReadStream(full, range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<StoredStat | null> {
    const full = this.resolveKey(key);
    if (!full) return null;
    try {
      const s = await stat(full);
      return s.isFile() ? { size: s.size, mtime: s.mtime } : null;
    } catch {
      return null;
    }
  }

  async delete(key: string): Promise<void> {
    const full = this.resolveKey(key);
    if (full) await rm(full, { force: true });
  }
}

async function discardAll(staged: Iterable<StagedObject>): Promise<void> {
  await Promise.allSettled([...staged].map((s) => s.discard()));
}

/**
 * The one stage → transaction → commit path of every write that stores files (versions,
 * submissions, media proxies, import). The bytes are staged, on disk, before the rows naming
 * them commit; `write` runs the transaction; only then are the bytes moved into place. A write
 * that fails discards every staged file, so no file outlives a refused write. A crash (or a
 * failed move) after the commit leaves the bytes staged under their key's name: the next start's
 * `recoverStaged` moves them into place, so no committed row is ever left without its file.
 *
 * `staged` is read after `write` settles (files may be staged inside it); `unused` names the
 * staged files the committed rows do not reference, which are discarded.
 */
export async function commitStaged<T>(
  staged: () => Iterable<StagedObject>,
  write: () => Promise<T>,
  unused: (result: T) => Iterable<StagedObject> = () => [],
): Promise<T> {
  let result: T;
  try {
    result = await write();
  } catch (err) {
    await discardAll(staged());
    throw err;
  }
  const drop = new Set(unused(result));
  await discardAll(drop);
  for (const s of staged()) if (!drop.has(s)) await s.commit();
  return result;
}

/** Discards files staged by a request that was refused before its write began. */
export const discardStaged = discardAll;
