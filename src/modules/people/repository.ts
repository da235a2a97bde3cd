import type { Db } from '../../db/index.js';

/** Contact columns are never selected, so they can never leak into an answer. */
export function listPeople(db: Db, productionId: number) {
  return db
    .selectFrom('people as p')
    .leftJoin('departments as d', 'd.id', 'p.department_id')
    .where('p.production_id', '=', productionId)
    .select(['p.id', 'p.name', 'p.role', 'd.slug as department', 'p.is_hod', 'p.is_admin', 'p.updated_at'])
    .orderBy('p.position')
    .orderBy('p.id')
    .execute();
}
