import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { EPOCH, stampOf } from '../../db/updated-at.js';
import { toBool } from '../../db/values.js';
import { listPeople } from './repository.js';
import type { Person } from './schemas.js';

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
