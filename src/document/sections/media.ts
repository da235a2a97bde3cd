import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../../db/index.js';
import type { MediaStore, StagedObject } from '../../media/store.js';
import { deleteMedia, insertMedia, type NewMedia } from '../../media/rows.js';
import { pathOf } from '../../validation.js';
import { DocumentError } from '../parse.js';
import type { ProductionDocument } from '../schema.js';
import { idOf, Pending, type Id } from '../sync/cells.js';
import type { SyncContext } from '../sync/context.js';
import { referencedByAny } from '../sync/references.js';
import type { VersionsSection } from './versions.js';

/*
 * Media files the document names (version stills, ingredient swatches). A file is known by
 * its content: a sync that finds a file whose SHA-256 the production already holds for the
 * document reuses that media object (same id, same media_path) and copies nothing. New files
 * are staged before the transaction where the production exists, made permanent after it
 * commits and discarded if it fails. A document media object nothing refers to any more after
 * the sync is deleted, and its file removed once the sync has committed.
 */

export interface DocumentFile {
  rel: string;
  full: string;
  sha256: string;
  size: number;
}

export async function sha256Of(full: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(full), hash);
  return hash.digest('hex');
}

type FileUse = [rel: string | null | undefined, path: Array<string | number>];

/** Files read and hashed at once: many small files are bound by latency, not by the disk. */
const HASHING_AT_ONCE = 8;

/** The files of `uses`, checked and hashed once each, in the order first named. */
async function readFiles(uses: Iterable<FileUse>, baseDir: string): Promise<Map<string, DocumentFile>> {
  const first = new Map<string, Array<string | number>>();
  for (const [rel, path] of uses) if (rel && !first.has(rel)) first.set(rel, path);
  const named = [...first];
  const files = new Map<string, DocumentFile>();
  for (let i = 0; i < named.length; i += HASHING_AT_ONCE) {
    const read = await Promise.all(
      named.slice(i, i + HASHING_AT_ONCE).map(([rel]) => readFile(rel, baseDir)),
    );
    // the first file missing in the document's order is the one refused
    for (const [k, f] of read.entries()) {
      const [rel, path] = named[i + k]!;
      if (!f) throw new DocumentError(`${pathOf(path)}: there is no file "${rel}" beside the document.`);
      files.set(rel, f);
    }
  }
  return files;
}

async function readFile(rel: string, baseDir: string): Promise<DocumentFile | null> {
  const full = resolve(baseDir, rel);
  const s = await stat(full).catch(() => null);
  return s?.isFile() ? { rel, full, size: s.size, sha256: await sha256Of(full) } : null;
}

function* versionFiles(doc: ProductionDocument): Generator<FileUse> {
  for (const [i, a] of (doc.assets ?? []).entries()) {
    for (const [j, v] of (a.versions ?? []).entries()) {
      yield [v.media, ['assets', i, 'versions', j, 'media']];
      for (const [k, g] of (v.ingredients ?? []).entries()) {
        yield [g.media, ['assets', i, 'versions', j, 'ingredients', k, 'media']];
      }
    }
  }
}

/** The files deliveries' packages and submissions hold. */
export function* turnoverFiles(doc: ProductionDocument): Generator<FileUse> {
  for (const [i, d] of (doc.deliveries ?? []).entries()) {
    for (const [j, f] of (d.files ?? []).entries()) yield [f.media, ['deliveries', i, 'files', j, 'media']];
  }
  for (const [i, s] of (doc.submissions ?? []).entries()) {
    for (const [j, f] of (s.files ?? []).entries()) yield [f.media, ['submissions', i, 'files', j, 'media']];
  }
}

/** Every file the versions and ingredients name, checked and hashed, in the order the document names them. */
export const readDocumentFiles = (doc: ProductionDocument, baseDir: string) =>
  readFiles(versionFiles(doc), baseDir);

/** Every file of a package or a submission, checked and hashed. */
export const readTurnoverFiles = (doc: ProductionDocument, baseDir: string) =>
  readFiles(turnoverFiles(doc), baseDir);

/**
 * Media the versions and ingredients show, by content: the document's, and the landed
 * versions' (an export carries their files; a sync of it finds them here, copying nothing).
 */
function documentMedia(db: Db, productionId: number) {
  return db
    .selectFrom('media as m')
    .where('m.production_id', '=', productionId)
    .where((eb) =>
      eb.or([
        eb(
          'm.id',
          'in',
          eb
            .selectFrom('versions as v')
            .where('v.production_id', '=', productionId)
            .where('v.media_id', 'is not', null)
            .select('v.media_id'),
        ),
        eb(
          'm.id',
          'in',
          eb
            .selectFrom('ingredients as i')
            .where('i.production_id', '=', productionId)
            .where('i.media_id', 'is not', null)
            .select('i.media_id'),
        ),
      ]),
    )
    .select(['m.id', 'm.sha256', 'm.storage_key', 'm.label'])
    .orderBy('m.id')
    .execute();
}

/**
 * Before the transaction: stages the files an existing production does not hold yet. (A new
 * production has no id to name its files by until its row exists, so its files are staged
 * in the transaction, right after that row.)
 */
export async function stageNewFiles(
  db: Db,
  code: string,
  files: ReadonlyMap<string, DocumentFile>,
  store: MediaStore,
  staged: Map<string, StagedObject>,
): Promise<void> {
  const p = await db.selectFrom('productions').where('code', '=', code).select('id').executeTakeFirst();
  if (!p) return;
  const known = new Set((await documentMedia(db, p.id)).map((m) => m.sha256));
  for (const f of files.values()) {
    if (known.has(f.sha256) || staged.has(f.sha256)) continue;
    staged.set(f.sha256, await store.stage(p.id, createReadStream(f.full), { filename: basename(f.full) }));
  }
}

interface FileToCreate {
  pending: Pending;
  file: DocumentFile;
  label: string;
  node: string;
}

/** What an export needs to copy the files the document shows beside it. */
export const readMediaFiles = (db: Db, pid: number) =>
  db.selectFrom('media').where('production_id', '=', pid).select(['id', 'storage_key', 'sha256']).execute();

export class MediaSection {
  private readonly bySha = new Map<string, Id>();
  private readonly creates: FileToCreate[] = [];
  private stored: Array<{ id: number; sha256: string; storage_key: string; label: string }> = [];
  private readonly deletes: Array<{ id: number; storage_key: string }> = [];

  constructor(
    private readonly files: ReadonlyMap<string, DocumentFile>,
    private readonly staged: Map<string, StagedObject>,
    private readonly store: MediaStore,
  ) {}

  /** The media id (or pending id) of a file the document names. */
  of(rel: string | null | undefined): Id | null {
    if (!rel) return null;
    const f = this.files.get(rel);
    return f ? (this.bySha.get(f.sha256) ?? null) : null;
  }

  async diff(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    this.stored = pid === null ? [] : await documentMedia(ctx.db, pid);
    for (const m of this.stored) if (!this.bySha.has(m.sha256)) this.bySha.set(m.sha256, m.id);
    // a new file's media object is labelled after, and belongs to, the first asset that shows it
    const owner = new Map<string, { node: string; label: string }>();
    for (const a of ctx.doc.assets ?? []) {
      for (const v of a.versions ?? []) {
        if (v.media && !owner.has(v.media))
          owner.set(v.media, { node: a.ref, label: `${a.label} v${v.version}` });
        for (const g of v.ingredients ?? []) {
          if (g.media && !owner.has(g.media)) owner.set(g.media, { node: a.ref, label: g.label });
        }
      }
    }
    const reused = new Set<number>();
    for (const f of this.files.values()) {
      const have = this.bySha.get(f.sha256);
      if (typeof have === 'number') reused.add(have);
      if (have !== undefined) continue;
      const o = owner.get(f.rel);
      if (!o) throw new Error(`internal: "${f.rel}" was read from the document but no asset shows it`);
      const pending = new Pending(f.rel);
      this.bySha.set(f.sha256, pending);
      this.creates.push({ pending, file: f, ...o });
      if (ctx.productionExists) ctx.record('media', 'created', f.rel, null);
      else ctx.countsOf('media').created++;
    }
    ctx.unchanged('media', reused.size);
  }

  /** After versions and ingredients have settled: what no row shows any more goes. */
  async settle(ctx: SyncContext, deps: { versions: VersionsSection }): Promise<void> {
    const after = deps.versions.mediaAfter();
    const candidates = this.stored.filter((m) => !after.has(m.id));
    const ids = candidates.map((m) => m.id);
    const still = ids.length
      ? await referencedByAny(ctx, ids, [
          [
            'versions',
            'media_id',
            { where: { column: 'source', op: '<>', value: 'document' } },
            'a landed version',
          ],
          ['generation_jobs', 'media_id', {}, 'a generation job'],
          ['library_files', 'proxy_media_id', {}, 'the library'],
        ])
      : new Map<number, string>();
    for (const m of candidates) {
      if (still.has(m.id)) {
        ctx.record('media', 'kept', m.label, m.id, { reason: `still shown by ${still.get(m.id)}` });
        continue;
      }
      this.deletes.push(m);
      ctx.record('media', 'deleted', m.label, m.id);
    }
  }

  async write(ctx: SyncContext): Promise<void> {
    const pid = idOf(ctx.productionId);
    const media: NewMedia[] = [];
    for (const c of this.creates) {
      let object = this.staged.get(c.file.sha256);
      if (!object) {
        object = await this.store.stage(pid, createReadStream(c.file.full), {
          filename: basename(c.file.full),
        });
        this.staged.set(c.file.sha256, object);
      }
      const owner = { nodeId: idOf(ctx.need(c.node)) };
      media.push({ productionId: pid, object, label: c.label, owner, createdBy: null, at: ctx.now });
    }
    const ids = await insertMedia(ctx.db, media);
    for (const [i, c] of this.creates.entries()) c.pending.id = ids[i] ?? null;
  }

  /** After every row has let go of them; returns the storage keys to delete once committed. */
  async removeOrphans(ctx: SyncContext): Promise<string[]> {
    const ids = this.deletes.map((m) => m.id);
    await deleteMedia(ctx.db, idOf(ctx.productionId), ids);
    return this.deletes.map((m) => m.storage_key);
  }

  /** Staged files this sync did not use (a file whose content turned out to be known). */
  unused(): StagedObject[] {
    const used = new Set(this.creates.map((c) => c.file.sha256));
    return [...this.staged.entries()].filter(([sha]) => !used.has(sha)).map(([, o]) => o);
  }
}
