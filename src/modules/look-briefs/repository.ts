import type { Db } from '../../db/index.js';

/**
 * A released version of this production with its asset, its media and the brief stored for
 * that very media (matched on the media's hash), in one query. Unknown, foreign and unreleased
 * versions are all simply absent.
 */
export function releasedVersionForBrief(db: Db, productionId: number, versionId: number) {
  return db
    .selectFrom('versions as v')
    .innerJoin('nodes as n', 'n.id', 'v.node_id')
    .leftJoin('media as m', 'm.id', 'v.media_id')
    .leftJoin('vision_look_briefs as b', (j) =>
      j.onRef('b.version_id', '=', 'v.id').onRef('b.source_sha256', '=', 'm.sha256'),
    )
    .where('v.production_id', '=', productionId)
    .where('v.id', '=', versionId)
    .where('v.released', '=', 1)
    .select([
      'v.id',
      'v.node_id',
      'v.version',
      'n.label',
      'm.id as media_id',
      'm.storage_key',
      'm.content_type',
      'm.sha256',
      'b.id as brief_id',
      'b.brief',
    ])
    .executeTakeFirst();
}

export interface StoredBrief {
  productionId: number;
  versionId: number;
  sourceSha256: string;
  brief: string;
  createdAt: string;
}

/**
 * Stores a brief unless one for the same version and source is already there (a concurrent
 * first request got in first); briefs of the version's earlier media go. Returns whether this
 * call stored it.
 */
export async function storeBrief(db: Db, row: StoredBrief): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('vision_look_briefs')
      .where('version_id', '=', row.versionId)
      .where('source_sha256', '<>', row.sourceSha256)
      .execute();
    const inserted = await trx
      .insertInto('vision_look_briefs')
      .values({
        production_id: row.productionId,
        version_id: row.versionId,
        source_sha256: row.sourceSha256,
        brief: row.brief,
        created_at: row.createdAt,
      })
      .onConflict((oc) => oc.columns(['version_id', 'source_sha256']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  });
}

/** Replaces a brief made by an older method. */
export async function replaceBrief(db: Db, briefId: number, brief: string, createdAt: string): Promise<void> {
  await db
    .updateTable('vision_look_briefs')
    .set({ brief, created_at: createdAt })
    .where('id', '=', briefId)
    .execute();
}

export function briefFor(db: Db, versionId: number, sourceSha256: string) {
  return db
    .selectFrom('vision_look_briefs')
    .where('version_id', '=', versionId)
    .where('source_sha256', '=', sourceSha256)
    .select(['id', 'brief'])
    .executeTakeFirst();
}
