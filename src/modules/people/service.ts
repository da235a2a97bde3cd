import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { EPOCH, stampOf } from '../../db/updated-at.js';
import { toBool } from '../../db/values.js';
import type { Person } from './schemas.js';

/** Contact columns are never selected, so they can never leak into an answer. */
function listPeople(db: Db, productionId: number) {
  return db
    .selectFrom('people as p')
    .leftJoin('departments as d', 'd.id', 'p.department_id')
    .where('p.production_id', '=', productionId)
    .select(['p.id', 'p.name', 'p.role', 'd.slug as department', 'p.is_hod', 'p.is_admin', 'p.updated_at'])
    .orderBy('p.position')
    .orderBy('p.id')
    .execute();
}

export async function crewDirectory(ctx: AppContext, principal: Principal): Promise<Person[]> {
  const rows = await listPeople(ctx.db, principal.productionId);
  return rows.map((p) => ({
    id: p.id,
    name: p.name,
    role: p.role,
    department: p.department ?? null,
    is_hod: toBool(p.is_hod),
    is_admin: toBool(p.is_admin),
    updated_at: stampOf(p.updated_at, EPOCH),
  }));
}
