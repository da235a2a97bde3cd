import type { Db } from '../../db/index.js';
import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { type ExportContext, nameOf } from './export-context.js';
import type { RowContext } from './row-context.js';

/** Organisations: the row each document object becomes, and (for an export) the objects the rows become. */

export type DocOrganisation = Required<ProductionDocument>['organisations'][number];

export const ORGANISATION_COLUMNS = { name: 'text' } satisfies ColumnTypes<'organisations'>;

export const organisationRow = <I extends Id>(o: DocOrganisation, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: o.ref,
  name: o.name,
});

export const readOrganisations = (db: Db, pid: number) =>
  db.selectFrom('organisations').where('production_id', '=', pid).selectAll().orderBy('id').execute();
export type StoredOrganisation = Awaited<ReturnType<typeof readOrganisations>>[number];

export const organisationsDoc = (organisations: readonly StoredOrganisation[], ex: ExportContext) => ({
  organisations: organisations.map((o): DocOrganisation => ({
    ref: nameOf(ex.organisation, o.id),
    name: o.name,
  })),
});
