import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import type { MediaStore, StagedObject } from '../../media/store.js';
import type { DocumentFile } from './media.js';

/*
 * The files of packages and submissions a sync brings in. Unlike a version's still, such a
 * file is a media object of its own wherever it is listed (a package file and a submitted one
 * with the same bytes are two objects, each with its owner and label), so each new one is
 * copied into the store under its own key. Staged when written, in the sync's transaction;
 * made permanent once it commits and discarded if it fails.
 */
export class TurnoverFiles {
  readonly staged: StagedObject[] = [];

  constructor(
    private readonly files: ReadonlyMap<string, DocumentFile>,
    private readonly store: MediaStore,
  ) {}

  /** The file a document path names (read and hashed before the sync began). */
  of(rel: string): DocumentFile {
    const f = this.files.get(rel);
    if (!f) throw new Error(`internal: "${rel}" was not read before the sync`);
    return f;
  }

  async stage(productionId: number, rel: string): Promise<StagedObject> {
    const f = this.of(rel);
    const object = await this.store.stage(productionId, createReadStream(f.full), {
      filename: basename(f.full),
    });
    this.staged.push(object);
    return object;
  }
}
