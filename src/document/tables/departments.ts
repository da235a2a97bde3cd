import type { Db } from '../../db/index.js';
import { fromBool, parseJson, toBool } from '../../db/values.js';
import { groupBy } from '../../util/group-by.js';
import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { json, type RowContext } from './row-context.js';

/**
 * Departments and the cost accounts they cover: the rows each document object becomes, and
 * (for an export) the objects the rows become.
 */

export type DocDepartment = Required<ProductionDocument>['departments'][number];

export const DEPARTMENT_COLUMNS = {
  name: 'text',
  cluster: 'text',
  phases: 'text',
  mission: 'text',
  key_roles: 'text',
  privacy: 'text',
  unveiled: 'integer',
  registry: 'text',
  position: 'integer',
} satisfies ColumnTypes<'departments'>;

export const departmentRow = <I extends Id>(d: DocDepartment, position: number, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  slug: d.slug,
  name: d.name,
  cluster: d.cluster ?? '',
  phases: json(d.phases ?? []),
  mission: d.mission ?? '',
  key_roles: json(d.key_roles ?? []),
  privacy: d.privacy ?? 'open',
  unveiled: fromBool(d.unveiled ?? true),
  registry: json(d.registry ?? {}),
  position,
});

/** The cost accounts a department covers, each once. */
export const accountsOf = (d: DocDepartment): string[] => [...new Set(d.accounts ?? [])];

/** Every department and account, in the document's order. */
export async function readDepartments(db: Db, pid: number) {
  const [departments, accounts] = await Promise.all([
    db
      .selectFrom('departments')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('department_accounts')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('account')
      .execute(),
  ]);
  return { departments, accounts };
}
export type StoredDepartments = Awaited<ReturnType<typeof readDepartments>>;

export function departmentsDoc(d: StoredDepartments) {
  const accountsOfDepartment = groupBy(d.accounts, (a) => a.department_id);
  return {
    departments: d.departments.map((r): DocDepartment => ({
      slug: r.slug,
      name: r.name,
      cluster: r.cluster,
      phases: parseJson<string[]>(r.phases, []),
      mission: r.mission,
      key_roles: parseJson<string[]>(r.key_roles, []),
      privacy: r.privacy,
      unveiled: toBool(r.unveiled),
      accounts: (accountsOfDepartment.get(r.id) ?? []).map((a) => a.account),
      registry: parseJson<Record<string, unknown>>(r.registry, {}),
    })),
  };
}
