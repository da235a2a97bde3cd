import { expressionBuilder, type AliasableExpression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Database } from '../../db/schema.js';

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
    .select(() => reach(expressionBuilder<Database, never>()).as('reached'))
    .executeTakeFirstOrThrow();
  const { reached, ...media } = row;
  return {
    // the left join makes every column nullable: a row whose id is set is a whole media row
    media: media.id === null ? null : (media as MediaRow),
    reached: reached === true || Number(reached) === 1,
  };
}
