import type { Id } from '../sync/cells.js';
import { fromBool } from '../../db/values.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { json, type RowContext } from './row-context.js';

/** Episodes, organisations, departments and people: the rows each document object becomes. */

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
