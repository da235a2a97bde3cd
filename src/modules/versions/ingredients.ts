import type { Db } from '../../db/index.js';
import { mediaPathOf } from '../../media/paths.js';

/*
 * What a released look is made of. The asset record shows each version's ingredients; a
 * character bundle shows the union over a costume's released versions. Both read them here
 * and map them with toIngredient, so an ingredient reads the same wherever it appears.
 */

/**
 * Ingredients of the given versions with their media, each version's in the order it lists
 * them. The version ids must be the production's own (every caller found them by a
 * production-scoped query); the production filter keeps a slip from reaching another's.
 */
export function ingredientsOfVersions(db: Db, productionId: number, versionIds: readonly number[]) {
  return db
    .selectFrom('ingredients as i')
    .leftJoin('media as m', 'm.id', 'i.media_id')
    .where('i.production_id', '=', productionId)
    .where('i.version_id', 'in', versionIds.length ? [...versionIds] : [-1])
    .select(['i.id', 'i.version_id', 'i.kind', 'i.label', 'i.relation', 'i.media_id', 'm.storage_key'])
    .orderBy('i.version_id')
    .orderBy('i.position')
    .orderBy('i.id')
    .execute();
}

export type IngredientRow = Awaited<ReturnType<typeof ingredientsOfVersions>>[number];

/** An ingredient as answers show it: its media only while the file is there. */
export function toIngredient(row: IngredientRow) {
  return {
    id: row.id,
    kind: row.kind,
    label: row.label,
    relation: row.relation,
    media_path: mediaPathOf(row.storage_key),
    media_id: row.storage_key ? row.media_id : null,
  };
}
