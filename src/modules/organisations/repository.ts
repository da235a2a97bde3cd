import type { Db } from '../../db/index.js';

/** Every organisation name of the production, to compare a new one against (one query). */
export function organisationNames(db: Db, productionId: number) {
  return db
    .selectFrom('organisations')
    .where('production_id', '=', productionId)
    .select(['id', 'ref', 'name'])
    .execute();
}

export async function insertOrganisation(
  db: Db,
  row: { production_id: number; ref: string; name: string },
): Promise<number> {
  const { id } = await db.insertInto('organisations').values(row).returning('id').executeTakeFirstOrThrow();
  return id;
}
