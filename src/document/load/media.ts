import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { StagedObject } from '../../media/store.js';
import { insertMedia, type MediaOwner, type NewMedia } from '../../media/rows.js';
import { fail, type Path } from '../check-items.js';
import { sha256Of } from '../sections/media.js';
import type { Loader, LoadOptions } from './loader.js';

/*
 * The media files a first import's versions and ingredients name. A file is known by its
 * content: the first object that shows a content names and owns its media object; the same
 * bytes under another name are that object again, copied once. A package's or a submission's
 * file is a media object of its own wherever it is listed (`own`). Files are staged as they
 * are met and made permanent only once the import commits.
 */

export interface MediaUse {
  rel: string;
  path: Path;
  /** The media object's label and owner, should this use be the content's first. */
  label: string;
  node: number;
}

/** A file that is a media object of its own: a package's or a submission's. */
export interface OwnFile {
  rel: string;
  path: Path;
  label: string;
  owner: MediaOwner;
  createdBy: string | null;
  at: string;
}

const STAGING_AT_ONCE = 8;

export class LoadMedia {
  private readonly ownStaged: StagedObject[] = [];

  private readonly byRel = new Map<string, string>();
  private readonly bySha = new Map<string, number>();
  private readonly stagedBySha = new Map<string, StagedObject>();

  constructor(
    private readonly loader: Loader,
    private readonly options: LoadOptions,
  ) {}

  /** The media ids of the uses, in order, creating a media object for each new content. */
  async idsOf(uses: readonly MediaUse[]): Promise<Array<number | null>> {
    const shas: string[] = [];
    const fresh: Array<{ sha: string; use: MediaUse; staged: StagedObject | null }> = [];
    for (const u of uses) {
      const sha = await this.shaOf(u);
      shas.push(sha);
      if (this.bySha.has(sha) || fresh.some((f) => f.sha === sha)) continue;
      fresh.push({ sha, use: u, staged: await this.stage(u, sha) });
    }
    const L = this.loader;
    const media: NewMedia[] = [];
    for (const { use, staged } of fresh) {
      // a plan stages nothing and writes nothing: its ids are made up
      if (staged === null) continue;
      const owner = { nodeId: use.node };
      media.push({
        productionId: L.productionId,
        object: staged,
        label: use.label,
        owner,
        createdBy: null,
        at: L.now,
      });
    }
    const ids = L.dryRun ? L.madeUpIds(fresh.length) : await insertMedia(L.db, media);
    for (const [i, f] of fresh.entries()) {
      const id = ids[i];
      if (id !== undefined) this.bySha.set(f.sha, id);
    }
    L.created('media', fresh.length);
    return shas.map((sha) => this.bySha.get(sha) ?? null);
  }

  /** One media object per file, in order (each checked beside the document first). */
  async own(files: readonly OwnFile[]): Promise<number[]> {
    const L = this.loader;
    for (const f of files) await this.exists(f);
    if (L.dryRun) return L.madeUpIds(files.length);
    const media: NewMedia[] = [];
    // a few at once: each copy ends in an fsync, and many small files wait on it, not on the disk
    for (let i = 0; i < files.length; i += STAGING_AT_ONCE) {
      const part = files.slice(i, i + STAGING_AT_ONCE);
      const objects = await Promise.all(part.map((f) => this.stageOwn(f.rel)));
      for (const [k, object] of objects.entries()) {
        const f = part[k]!;
        media.push({
          productionId: L.productionId,
          object,
          label: f.label,
          owner: f.owner,
          createdBy: f.createdBy,
          at: f.at,
        });
      }
    }
    return insertMedia(L.db, media);
  }

  private async stageOwn(rel: string): Promise<StagedObject> {
    const full = resolve(this.options.baseDir, rel);
    const object = await this.options.store.stage(this.loader.productionId, createReadStream(full), {
      filename: basename(full),
    });
    this.ownStaged.push(object);
    return object;
  }

  private async exists(u: { rel: string; path: Path }): Promise<void> {
    const s = await stat(resolve(this.options.baseDir, u.rel)).catch(() => null);
    if (!s?.isFile()) fail(u.path, `there is no file "${u.rel}" beside the document.`);
  }

  private async shaOf(u: MediaUse): Promise<string> {
    const known = this.byRel.get(u.rel);
    if (known) return known;
    const full = resolve(this.options.baseDir, u.rel);
    const s = await stat(full).catch(() => null);
    if (!s?.isFile()) fail(u.path, `there is no file "${u.rel}" beside the document.`);
    const sha = await sha256Of(full);
    this.byRel.set(u.rel, sha);
    return sha;
  }

  private async stage(u: MediaUse, sha: string): Promise<StagedObject | null> {
    if (this.loader.dryRun) return null;
    const full = resolve(this.options.baseDir, u.rel);
    const obj = await this.options.store.stage(this.loader.productionId, createReadStream(full), {
      filename: basename(full),
    });
    this.stagedBySha.set(sha, obj);
    return obj;
  }

  staged(): StagedObject[] {
    return [...this.stagedBySha.values(), ...this.ownStaged];
  }
}
