import type { Db } from '../../db/index.js';

/** What a version summary is made of, from `versions as v` left-joined to `media as m`. */
export const VERSION_COLUMNS = [
  'v.id',
  'v.node_id',
  'v.version',
  'v.variant',
  'v.status',
  'v.released',
  'v.note',
  'v.created_by',
  'v.created_by_person_id',
  'v.archived',
  'v.created_at',
  'v.media_id',
  'v.updated_at',
  'm.storage_key',
] as const;

/**
 * Released versions of many nodes in one query, oldest version first within a node. The node
 * ids must be the production's own (every caller found them by a production-scoped query):
 * filtering `versions` on its production as well would offer the planner
 * `versions_production_released`, which walks every released version of the production and
 * which SQLite picks whenever statistics are missing (bench/FINDINGS.md §1). Without it the
 * only index that applies is `versions_node_version`, whatever the statistics.
 */
export function releasedVersionsOf(db: Db, nodeIds: readonly number[]) {
  return db
    .selectFrom('versions as v')
    .leftJoin('media as m', 'm.id', 'v.media_id')
    .where('v.released', '=', 1)
    .where('v.node_id', 'in', nodeIds.length ? [...nodeIds] : [-1])
    .select(VERSION_COLUMNS)
    .orderBy('v.node_id')
    .orderBy('v.version')
    .execute();
}

export type VersionRow = Awaited<ReturnType<typeof releasedVersionsOf>>[number];

/** The row of a version an upload has just landed: its file, author and time are known. */
export type LandedVersionRow = Pick<
  VersionRow,
  | 'id'
  | 'node_id'
  | 'version'
  | 'variant'
  | 'status'
  | 'released'
  | 'note'
  | 'storage_key'
  | 'created_by_person_id'
> & { media_id: number; created_by: string; created_at: string };

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
