import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTypeFromBuffer } from 'file-type';
import { errors } from '../errors.js';

/**
 * Where media bytes live. Writes are staged under a temporary name and only made permanent
 * by `commit()` after the database transaction that references them has committed, so a
 * failed write leaves no stored bytes behind (`discard()`).
 */
export interface MediaStore {
  stage(productionId: number, source: Readable, options?: StageOptions): Promise<StagedObject>;
  open(key: string, range?: ByteRange): Promise<Readable>;
  stat(key: string): Promise<StoredStat | null>;
  delete(key: string): Promise<void>;
  /** Absolute location of a key, or null if the key would escape the store. */
  resolveKey(key: string): string | null;
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
  const m = filename?.toLowerCase().match(/\.([a-z0-9]{1,8})$/);
  return m ? m[1]! : 'bin';
};

/** Media kind shown in the API, from the sniffed content type. */
export const mediaKindOf = (contentType: string): string => {
  const top = contentType.split('/')[0];
  if (top === 'image' || top === 'video' || top === 'audio') return top;
  if (contentType === 'application/pdf') return 'document';
  return 'file';
};

export async function sniffContentType(head: Buffer): Promise<string> {
  const found = await fileTypeFromBuffer(head);
  return found?.mime ?? 'application/octet-stream';
}

export class FileMediaStore implements MediaStore {
  readonly root: string;
  private readonly staging: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.staging = join(this.root, '.staging');
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
    await mkdir(this.staging, { recursive: true });
    const tmp = join(this.staging, randomUUID());
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
    try {
      await pipeline(source, meter, createWriteStream(tmp, { flags: 'wx' }));
      // a stream truncated by a size limit upstream (multipart) ends without an error
      if ((source as Readable & { truncated?: boolean }).truncated) {
        throw errors.tooLarge(`file is larger than the limit of ${max ?? 'the configured'} bytes`);
      }
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const contentType = await sniffContentType(Buffer.concat(headChunks).subarray(0, SNIFF_BYTES));
    const id = randomUUID();
    const key = `${productionId}/${id.slice(0, 2)}/${id}.${extOf(contentType, options.filename)}`;
    const final = join(this.root, key);
    let settled = false;
    return {
      key,
      size,
      sha256: hash.digest('hex'),
      contentType,
      commit: async () => {
        if (settled) return;
        await mkdir(dirname(final), { recursive: true });
        await rename(tmp, final);
        settled = true;
      },
      discard: async () => {
        if (settled) return;
        settled = true;
        await rm(tmp, { force: true });
      },
    };
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

  /** Staged files older than a day belong to writes that died mid-flight. */
  async sweepStaging(olderThanMs = 24 * 3600 * 1000): Promise<number> {
    let removed = 0;
    let names: string[];
    try {
      names = await readdir(this.staging);
    } catch {
      return 0;
    }
    const cutoff = Date.now() - olderThanMs;
    for (const name of names) {
      const p = join(this.staging, name);
      const s = await stat(p).catch(() => null);
      if (s && s.mtimeMs < cutoff) {
        await rm(p, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/** Commit or discard a set of staged objects together. */
export async function commitAll(staged: readonly StagedObject[]): Promise<void> {
  for (const s of staged) await s.commit();
}

export async function discardAll(staged: readonly StagedObject[]): Promise<void> {
  await Promise.allSettled(staged.map((s) => s.discard()));
}
