import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { parseJson, toBool, toInt } from '../../db/values.js';
import { EPOCH, stampOf } from '../../db/updated-at.js';
import { errors } from '../../errors.js';
import * as repo from './repository.js';
import type { DepartmentDetail, DepartmentRow } from './schemas.js';

export async function listDepartments(ctx: AppContext, principal: Principal): Promise<DepartmentRow[]> {
  const rows = await repo.listDepartments(ctx.db, principal.productionId);
  return rows.map((d) => ({
    id: d.id,
    slug: d.slug,
    name: d.name,
    cluster: d.cluster,
    phases: parseJson<string[]>(d.phases, []),
    mission: d.mission,
    key_roles: parseJson<string[]>(d.key_roles, []),
    privacy: d.privacy,
    unveiled: toBool(d.unveiled),
    updated_at: stampOf(d.updated_at, EPOCH),
  }));
}

export async function getDepartment(
  ctx: AppContext,
  principal: Principal,
  slug: string,
): Promise<DepartmentDetail> {
  const d = await repo.findDepartmentBySlug(ctx.db, principal.productionId, slug);
  if (!d) throw errors.notFound('department');
  const people = await repo.listDepartmentPeople(ctx.db, d.id);
  return {
    id: d.id,
    slug: d.slug,
    name: d.name,
    cluster: d.cluster,
    registry: parseJson<Record<string, unknown>>(d.registry, {}),
    people: people.map((p) => ({ id: p.id, name: p.name, role: p.role, is_hod: toBool(p.is_hod) })),
    assets: toInt(d.assets),
  };
}
