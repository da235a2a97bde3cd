import type { Db } from '../../db/index.js';
import type { Id } from '../sync/cells.js';
import { fromBool, parseJson, toBool } from '../../db/values.js';
import { groupBy } from '../../util/group-by.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import type { ExportContext } from './export-context.js';
import { json, type RowContext } from './row-context.js';

/**
 * Episodes, organisations, departments and people: the rows each document object becomes,
 * and (for an export) the document objects the stored rows become.
 */

type Doc = Required<ProductionDocument>;
export type DocEpisode = Doc['episodes'][number];
export type DocOrganisation = Doc['organisations'][number];
export type DocDepartment = Doc['departments'][number];
export type DocPerson = Doc['people'][number];

export const EPISODE_COLUMNS = {
  code: 'text',
  title: 'text',
  position: 'integer',
} satisfies ColumnTypes<'episodes'>;

export const episodeRow = <I extends Id>(e: DocEpisode, position: number, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: e.ref,
  code: e.code,
  title: e.title ?? '',
  position,
});

export const ORGANISATION_COLUMNS = { name: 'text' } satisfies ColumnTypes<'organisations'>;

export const organisationRow = <I extends Id>(o: DocOrganisation, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: o.ref,
  name: o.name,
});

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

export const PERSON_COLUMNS = {
  name: 'text',
  role: 'text',
  department_id: 'integer',
  is_hod: 'integer',
  is_admin: 'integer',
  email: 'text',
  phone: 'text',
  position: 'integer',
} satisfies ColumnTypes<'people'>;

export const personRow = <I extends Id>(x: DocPerson, position: number, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: x.ref,
  name: x.name,
  role: x.role ?? '',
  department_id: ctx.id(x.department),
  is_hod: fromBool(x.is_hod),
  is_admin: fromBool(x.is_admin),
  email: x.email ?? null,
  phone: x.phone ?? null,
  position,
});

/** The stored rows an export reads, in the document's order. */
export async function readCrew(db: Db, pid: number) {
  const [episodes, organisations, departments, accounts, people] = await Promise.all([
    db
      .selectFrom('episodes')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
    db.selectFrom('organisations').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
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
    db
      .selectFrom('people')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
  ]);
  return { episodes, organisations, departments, accounts, people };
}
export type StoredCrew = Awaited<ReturnType<typeof readCrew>>;

export const crewRefs = (c: StoredCrew): Array<string | null> => [
  ...[...c.episodes, ...c.organisations, ...c.people].map((r) => r.ref),
  ...c.departments.map((d) => d.slug),
];

export function nameCrew(c: StoredCrew, ex: ExportContext): void {
  ex.name(c.episodes, ex.episode, () => 'episode');
  ex.name(c.organisations, ex.organisation, () => 'org');
  for (const d of c.departments) ex.department.set(d.id, d.slug);
  ex.name(c.people, ex.person, () => 'person');
}

export function crewDoc(c: StoredCrew, ex: ExportContext) {
  const accountsOfDepartment = groupBy(c.accounts, (a) => a.department_id);
  return {
    ...(ex.episodic
      ? { episodes: c.episodes.map((e) => ({ ref: ex.episode.get(e.id)!, code: e.code, title: e.title })) }
      : {}),
    organisations: c.organisations.map((o) => ({ ref: ex.organisation.get(o.id)!, name: o.name })),
    departments: c.departments.map((d): DocDepartment => ({
      slug: d.slug,
      name: d.name,
      cluster: d.cluster,
      phases: parseJson<string[]>(d.phases, []),
      mission: d.mission,
      key_roles: parseJson<string[]>(d.key_roles, []),
      privacy: d.privacy,
      unveiled: toBool(d.unveiled),
      accounts: (accountsOfDepartment.get(d.id) ?? []).map((a) => a.account),
      registry: parseJson<Record<string, unknown>>(d.registry, {}),
    })),
    people: c.people.map((x): DocPerson => ({
      ref: ex.person.get(x.id)!,
      name: x.name,
      role: x.role,
      department: ex.departmentOf(x.department_id),
      is_hod: toBool(x.is_hod),
      is_admin: toBool(x.is_admin),
      email: x.email,
      phone: x.phone,
    })),
  };
}
