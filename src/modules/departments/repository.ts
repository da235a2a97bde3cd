import type { Db } from '../../db/index.js';

export function listDepartments(db: Db, productionId: number) {
  return db
    .selectFrom('departments')
    .where('production_id', '=', productionId)
    .select([
      'id',
      'slug',
      'name',
      'cluster',
      'phases',
      'mission',
      'key_roles',
      'privacy',
      'unveiled',
      'updated_at',
    ])
    .orderBy('position')
    .orderBy('id')
    .execute();
}

export function findDepartmentBySlug(db: Db, productionId: number, slug: string) {
  return db
    .selectFrom('departments as d')
    .where('d.production_id', '=', productionId)
    .where('d.slug', '=', slug)
    .select((eb) => [
      'd.id',
      'd.slug',
      'd.name',
      'd.cluster',
      'd.registry',
      eb
        .selectFrom('nodes')
        .whereRef('nodes.department_id', '=', 'd.id')
        .where('nodes.kind', '<>', 'scene')
        .where('nodes.retired_at', 'is', null)
        .select(eb.fn.countAll().as('n'))
        .as('assets'),
    ])
    .executeTakeFirst();
}

export function listDepartmentPeople(db: Db, departmentId: number) {
  return db
    .selectFrom('people')
    .where('department_id', '=', departmentId)
    .select(['id', 'name', 'role', 'is_hod'])
    .orderBy('is_hod', 'desc')
    .orderBy('position')
    .orderBy('id')
    .execute();
}
