// No routes: the storage events, the move tasks and the proxy images change the library through this.
import type { Db } from '../../db/index.js';
import { errors } from '../../errors.js';
import type { OneOf, STORAGE_EVENT_TYPES } from '../../domain/vocabulary.js';
import {
  detachFiles,
  insertFiles,
  liveFilesAt,
  retireFiles,
  rewriteFiles,
  productionFilespace,
  type FileRewrite,
  type NewFile,
} from './repository.js';

export type StorageEventType = OneOf<typeof STORAGE_EVENT_TYPES>;

/** What the library needs from an event (a storage event, or a move task the agent has done). */
export interface LibraryChange {
  eventType: StorageEventType;
  path: string;
  toPath: string | null;
  at: string;
  size: number | null;
}

interface FileState {
  id: number | null;
  originalPath: string | null;
  path: string;
  size: number | null;
  detectedAt: string;
  updatedAt: string;
  dirty: boolean;
}

/** The library's touched live rows, played through a sequence of changes in memory. */
class LibraryPlay {
  readonly live = new Map<string, FileState>();
  /** Stored rows retired, with when. */
  readonly retired = new Map<number, string>();
  /** Paths `create` events brought into the library as new files. */
  readonly created: string[] = [];

  constructor(
    rows: ReadonlyArray<{
      id: number;
      path: string;
      size: number | null;
      detected_at: string;
      updated_at: string;
    }>,
  ) {
    for (const f of rows) {
      this.live.set(f.path, {
        id: f.id,
        originalPath: f.path,
        path: f.path,
        size: f.size,
        detectedAt: f.detected_at,
        updatedAt: f.updated_at,
        dirty: false,
      });
    }
  }

  apply(c: LibraryChange): void {
    if (c.eventType === 'create' || c.eventType === 'modify') this.upsert(c.path, c);
    else if (c.eventType === 'delete') this.remove(c.path, c.at);
    else if (c.toPath) this.move(c, c.toPath);
  }

  private upsert(path: string, c: LibraryChange): void {
    const s = this.live.get(path);
    if (s) {
      s.size = c.size ?? s.size;
      s.updatedAt = c.at;
      s.dirty = true;
      return;
    }
    this.live.set(path, {
      id: null,
      originalPath: null,
      path,
      size: c.size,
      detectedAt: c.at,
      updatedAt: c.at,
      dirty: true,
    });
    if (c.eventType === 'create') this.created.push(path);
  }

  private remove(path: string, at: string): void {
    const s = this.live.get(path);
    if (!s) return;
    this.live.delete(path);
    if (s.id !== null) this.retired.set(s.id, at);
  }

  /** A move of an unknown path records the file where it arrived. */
  private move(c: LibraryChange, to: string): void {
    const s = this.live.get(c.path);
    if (!s) return this.upsert(to, c);
    this.live.delete(c.path);
    this.remove(to, c.at);
    s.path = to;
    s.size = c.size ?? s.size;
    s.updatedAt = c.at;
    s.dirty = true;
    this.live.set(to, s);
  }
}

/** Writes the played end state set-wise. */
async function writeLibrary(trx: Db, productionId: number, play: LibraryPlay): Promise<void> {
  const finals = [...play.live.values()].filter((s) => s.dirty);
  const inserts: NewFile[] = finals
    .filter((s) => s.id === null)
    .map((s) => ({ path: s.path, size: s.size, detected_at: s.detectedAt, updated_at: s.updatedAt }));
  const rewrites: FileRewrite[] = finals.flatMap(({ id, path, size, updatedAt }) =>
    id === null ? [] : [{ id, path, size, updated_at: updatedAt }],
  );
  const renamed = finals.flatMap(({ id, path, originalPath }) =>
    id !== null && path !== originalPath ? [id] : [],
  );

  // Order matters for the unique live-path index: free paths before anything lands on them.
  await retireFiles(
    trx,
    [...play.retired].map(([id, at]) => ({ id, at })),
  );
  await detachFiles(trx, renamed);
  await insertFiles(trx, productionId, inserts);
  await rewriteFiles(trx, rewrites);
}

/**
 * Applies changes, in order, to the library (one row per live path) with a bounded number of
 * statements: the touched live rows are read once, the sequence is played in memory, and the
 * end state is written set-wise. Answers the paths that `create` events brought into the
 * library as new files, for the activity feed.
 *
 * - create / modify: upsert the live row at `path` (size kept when the event has none);
 * - delete: retire the live row (it stays as history); unknown path: nothing to do;
 * - move: rename the live row, retiring any live row it lands on; when `path` is not known
 *   the file is simply recorded at `to_path` (the agent saw it arrive there).
 */
export async function applyToLibrary(
  trx: Db,
  productionId: number,
  changes: readonly LibraryChange[],
): Promise<{ created: string[] }> {
  if (changes.length === 0) return { created: [] };
  const touched = new Set<string>();
  for (const c of changes) {
    touched.add(c.path);
    if (c.toPath) touched.add(c.toPath);
  }
  const play = new LibraryPlay(await liveFilesAt(trx, productionId, [...touched]));
  for (const c of changes) play.apply(c);
  await writeLibrary(trx, productionId, play);
  return { created: play.created };
}

/** A storage call speaks for one filespace install; anything but the production's active one is 403. */
export async function assertActiveFilespace(db: Db, productionId: number, filespace: string): Promise<void> {
  const active = await productionFilespace(db, productionId);
  if (active === null) throw errors.forbidden('this production has no active filespace install');
  if (filespace !== active)
    throw errors.forbidden(`filespace "${filespace}" is not this production's active install`);
}
