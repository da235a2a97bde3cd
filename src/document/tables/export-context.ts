import { extname } from 'node:path';
import { madeUpRef } from '../sync/made-up-refs.js';

/*
 * What turning stored rows back into the document needs: the mirror of RowContext. Each
 * object the document can name gets its ref (the document's own where there is one, a
 * made-up one, never taken, where the API made the object), and each media file the
 * document shows gets its path beside the document.
 */

export interface ExportedFile {
  /** Path in the document, relative to it (`media/…`). */
  rel: string;
  storageKey: string;
}

export interface MediaFileRow {
  id: number;
  storage_key: string;
  sha256: string;
}

interface Named {
  id: number;
  ref: string | null;
}

export class ExportContext {
  /** Every exported ref to the id it has in this database (refs the export made up included). */
  readonly refs: Record<string, number> = {};
  readonly episode = new Map<number, string>();
  readonly organisation = new Map<number, string>();
  /** Department ids to slugs. */
  readonly department = new Map<number, string>();
  readonly person = new Map<number, string>();
  /** Live nodes only: a retired one names nothing the document has. */
  readonly node = new Map<number, string>();
  readonly version = new Map<number, string>();
  readonly approval = new Map<number, string>();
  /** Live deliveries only. */
  readonly delivery = new Map<number, string>();
  /** Live engagements only. */
  readonly engagement = new Map<number, string>();
  private readonly taken: Set<string>;
  private readonly files = new Map<string, ExportedFile>();
  private readonly media: Map<number, MediaFileRow>;

  /** `taken`: every ref (and department slug) the production's rows already carry. */
  constructor(
    readonly episodic: boolean,
    taken: Iterable<string>,
    media: readonly MediaFileRow[],
  ) {
    this.taken = new Set(taken);
    this.media = new Map(media.map((m) => [m.id, m]));
  }

  /** The row's ref, or one made up for it (`<prefix>-<id>`, `-x` appended while taken). */
  refFor(row: Named, prefix: string): string {
    if (row.ref) {
      this.refs[row.ref] = row.id;
      return row.ref;
    }
    let ref = madeUpRef(prefix, row.id);
    while (this.taken.has(ref)) ref = `${ref}-x`;
    this.taken.add(ref);
    this.refs[ref] = row.id;
    return ref;
  }

  /** Names each row in `into`, by id. */
  name<R extends Named>(rows: readonly R[], into: Map<number, string>, prefix: (row: R) => string): void {
    for (const r of rows) into.set(r.id, this.refFor(r, prefix(r)));
  }

  departmentOf(id: number | null): string | null {
    return id === null ? null : (this.department.get(id) ?? null);
  }

  /** The ref of a live node, or null (none, or retired). */
  nodeOf(id: number | null): string | null {
    return id === null ? null : (this.node.get(id) ?? null);
  }

  isLive(nodeId: number | null): nodeId is number {
    return nodeId !== null && this.node.has(nodeId);
  }

  /** The document's path of a media file, one per content, copied beside the document. */
  fileOf(mediaId: number | null): string | null {
    if (mediaId === null) return null;
    const m = this.media.get(mediaId);
    if (!m) return null;
    const ext = extname(m.storage_key) || '.bin';
    const rel = `media/${m.sha256.slice(0, 24)}${ext}`;
    if (!this.files.has(rel)) this.files.set(rel, { rel, storageKey: m.storage_key });
    return rel;
  }

  exportedFiles(): ExportedFile[] {
    return [...this.files.values()];
  }
}

/**
 * The ref `names` holds for a row the export named earlier: each section names its rows (or
 * the rows they point at) before building their document objects, so a miss is a bug here.
 */
export function nameOf(names: ReadonlyMap<number, string>, id: number): string {
  const ref = names.get(id);
  if (ref === undefined) throw new Error(`internal: row ${id} is exported before it was named`);
  return ref;
}

/** Drops null and undefined, so the document leaves the field out. */
export const opt = <T>(v: T | null | undefined): T | undefined =>
  v === null || v === undefined ? undefined : v;
