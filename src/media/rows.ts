import type { Insertable } from 'kysely';
import type { Db } from '../db/index.js';
import type { MediaTable } from '../db/schema.js';
import { chunks } from '../util/chunks.js';
import { mediaKindOf, type StagedObject } from './store.js';

/*
 * The one place `media` rows are written. A media object is a stored file and who it belongs
 * to; its kind always comes from the content type sniffed from its bytes, never from a name.
 */

/** Who a media object belongs to. */
export type MediaOwner =
  /** An asset's node shows it: a landed version's file, or a file the production document names. */
  | { nodeId: number }
  /** A vendor submitted it on a turnover: the submission, and the engagement that uploaded it. */
  | { deliveryId: number; workItemId: number; uploaderEngagementId: number | null }
  /** The production put it in a delivery's package (what the delivery sends): no work item. */
  | { packageOf: number }
  /** Nothing but the row that points at it (a library file's proxy image). */
  | null;

export interface NewMedia {
  productionId: number;
  /** The file as stored: its key, size, hash and sniffed type. */
  object: Pick<StagedObject, 'key' | 'size' | 'sha256' | 'contentType'>;
  label: string;
  owner: MediaOwner;
  /** Who uploaded it (the key's actor); null for a file a document brought. */
  createdBy: string | null;
  at: string;
}

function rowOf(m: NewMedia): Omit<Insertable<MediaTable>, 'id'> {
  const node = m.owner && 'nodeId' in m.owner ? m.owner : null;
  const upload = m.owner && 'workItemId' in m.owner ? m.owner : null;
  const pack = m.owner && 'packageOf' in m.owner ? m.owner : null;
  return {
    production_id: m.productionId,
    ref: null,
    storage_key: m.object.key,
    kind: mediaKindOf(m.object.contentType),
    label: m.label,
    content_type: m.object.contentType,
    size: m.object.size,
    sha256: m.object.sha256,
    node_id: node?.nodeId ?? null,
    delivery_id: upload?.deliveryId ?? pack?.packageOf ?? null,
    work_item_id: upload?.workItemId ?? null,
    uploader_engagement_id: upload?.uploaderEngagementId ?? null,
    created_by: m.createdBy,
    created_at: m.at,
  };
}

/** Inserts one media row and returns its id. */
export async function insertMediaObject(db: Db, media: NewMedia): Promise<number> {
  const { id } = await db.insertInto('media').values(rowOf(media)).returning('id').executeTakeFirstOrThrow();
  return id;
}

/**
 * Inserts media rows in as few statements as the parameter limits allow (a document import
 * brings a production's files in one go); their ids come back in the order given, matched by
 * storage key, which is unique, not by the order rows come back in.
 */
export async function insertMedia(db: Db, media: readonly NewMedia[]): Promise<number[]> {
  const idOf = new Map<string, number>();
  for (const part of chunks(media)) {
    const out = await db
      .insertInto('media')
      .values(part.map(rowOf))
      .returning(['id', 'storage_key'])
      .execute();
    for (const r of out) idOf.set(r.storage_key, r.id);
  }
  return media.map(({ object }) => {
    const id = idOf.get(object.key);
    if (id === undefined) throw new Error(`internal: no id came back for the media row of ${object.key}`);
    return id;
  });
}

/** Deletes media rows of a production (their files are the caller's to remove once committed). */
export async function deleteMedia(db: Db, productionId: number, ids: readonly number[]): Promise<void> {
  for (const part of chunks(ids)) {
    await db.deleteFrom('media').where('production_id', '=', productionId).where('id', 'in', part).execute();
  }
}
