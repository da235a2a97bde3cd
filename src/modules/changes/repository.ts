import { sql } from 'kysely';
import type { ChangeKind } from '../../db/change-log.js';
import type { Db } from '../../db/index.js';

/** The production's changes after `afterId`, oldest first (commit order, see commitChanges). */
export function changesAfter(
  db: Db,
  productionId: number,
  afterId: number,
  limit: number,
  kinds?: readonly ChangeKind[] | null,
) {
  let q = db
    .selectFrom('changes')
    .where('production_id', '=', productionId)
    .where('id', '>', afterId)
    .select(['id', 'at', 'kind', 'object_id', 'op', 'actor'])
    .orderBy('id')
    .limit(limit);
  // an empty list of kinds matches nothing (null: every kind)
  if (kinds) q = kinds.length ? q.where('kind', 'in', [...kinds]) : q.where(sql<boolean>`false`);
  return q.execute();
}

/** The id of the production's newest change (0 before any). */
export async function headChangeId(db: Db, productionId: number): Promise<number> {
  const row = await db
    .selectFrom('changes')
    .where('production_id', '=', productionId)
    .select((eb) => eb.fn.max('id').as('m'))
    .executeTakeFirst();
  return Number(row?.m ?? 0);
}

/** The newest change id of each production asked about, in one query. */
export async function headsOf(db: Db, productionIds: readonly number[]): Promise<Map<number, number>> {
  if (productionIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('changes')
    .where('production_id', 'in', [...productionIds])
    .groupBy('production_id')
    .select((eb) => ['production_id', eb.fn.max('id').as('m')])
    .execute();
  return new Map(rows.map((r) => [r.production_id, Number(r.m)]));
}
