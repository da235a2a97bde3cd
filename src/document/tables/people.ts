import type { Db } from '../../db/index.js';
import { fromBool, toBool } from '../../db/values.js';
import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { type ExportContext, nameOf } from './export-context.js';
import type { RowContext } from './row-context.js';

/** People: the row each document object becomes, and (for an export) the objects the rows become. */

export type DocPerson = Required<ProductionDocument>['people'][number];

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

export const readPeople = (db: Db, pid: number) =>
  db
    .selectFrom('people')
    .where('production_id', '=', pid)
    .selectAll()
    .orderBy('position')
    .orderBy('id')
    .execute();
export type StoredPerson = Awaited<ReturnType<typeof readPeople>>[number];

export const peopleDoc = (people: readonly StoredPerson[], ex: ExportContext) => ({
  people: people.map((x): DocPerson => ({
    ref: nameOf(ex.person, x.id),
    name: x.name,
    role: x.role,
    department: ex.departmentOf(x.department_id),
    is_hod: toBool(x.is_hod),
    is_admin: toBool(x.is_admin),
    email: x.email,
    phone: x.phone,
  })),
});
