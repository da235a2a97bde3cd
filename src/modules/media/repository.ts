import type { AliasableExpression, ExpressionBuilder, Insertable, SqlBool } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Database, MediaTable } from '../../db/schema.js';
import { mediaKindOf, type StagedObject } from '../../media/store.js';
import { chunks } from '../../util/chunks.js';

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

/**
 * Takes a file out of its delivery's package: the row stays (for history and production-wide
 * keys), marked with when. Only a package file (no work item) not yet taken out; answers
 * whether it moved.
 */
export async function removeFromPackage(
  db: Db,
  productionId: number,
  deliveryId: number,
  mediaId: number,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('media')
    .set({ removed_at: at })
    .where('production_id', '=', productionId)
    .where('id', '=', mediaId)
    .where('delivery_id', '=', deliveryId)
    .where('work_item_id', 'is', null)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A file of this delivery's package (taken out or not), or nothing. */
export function findPackageFile(db: Db, productionId: number, deliveryId: number, mediaId: number) {
  return db
    .selectFrom('media')
    .where('production_id', '=', productionId)
    .where('id', '=', mediaId)
    .where('delivery_id', '=', deliveryId)
    .where('work_item_id', 'is', null)
    .select(['id', 'label', 'removed_at'])
    .executeTakeFirst();
}

const COLUMNS = [
  'm.id',
  'm.production_id',
  'm.storage_key',
  'm.kind',
  'm.label',
  'm.content_type',
  'm.size',
  'm.sha256',
  'm.node_id',
  'm.delivery_id',
  'm.work_item_id',
  'm.uploader_engagement_id',
  'm.created_by',
  'm.created_at',
  'm.updated_at',
] as const;

export function findMedia(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('media as m')
    .where('m.production_id', '=', productionId)
    .where('m.id', '=', id)
    .select(COLUMNS)
    .executeTakeFirst();
}

export type MediaRow = NonNullable<Awaited<ReturnType<typeof findMedia>>>;

/**
 * The media row (or nothing) and the value of `reach`, in one statement that evaluates `reach`
 * whether or not the row exists: one row always comes back (from a one-row source the media is
 * left-joined to), so a missing id costs what a present one does.
 */
export async function findMediaWithReach(
  db: Db,
  productionId: number,
  id: number,
  reach: (eb: ExpressionBuilder<Database, never>) => AliasableExpression<SqlBool>,
) {
  const row = await db
    .selectFrom(db.selectNoFrom((eb) => eb.lit(1).as('one')).as('probe'))
    .leftJoin('media as m', (join) => join.on('m.id', '=', id).on('m.production_id', '=', productionId))
    .select(COLUMNS)
    .select((eb) => reach(eb as unknown as ExpressionBuilder<Database, never>).as('reached'))
    .executeTakeFirstOrThrow();
  const { reached, ...media } = row as typeof row & { reached: unknown };
  return {
    media: media.id === null ? null : (media as unknown as MediaRow),
    reached: reached === true || Number(reached) === 1,
  };
}
