import type { Db } from '../../db/index.js';
import { groupBy } from '../../util/group-by.js';
import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { type ExportContext, nameOf } from './export-context.js';
import { iso, type RowContext } from './row-context.js';

/**
 * Engagements and their grants (what vendors reach): the rows each document object becomes,
 * and (for an export) the document objects the live rows become.
 */

export type DocEngagement = Required<ProductionDocument>['engagements'][number];
export type DocGrant = NonNullable<DocEngagement['grants']>[number];

export const ENGAGEMENT_COLUMNS = {
  organisation_id: 'integer',
  retired_at: 'text',
  retired_by: 'text',
  source: 'text',
} satisfies ColumnTypes<'engagements'>;

export const engagementRow = <I extends Id>(e: DocEngagement, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: e.ref,
  organisation_id: ctx.need(e.organisation),
  created_at: ctx.now,
  source: 'document' as const,
  retired_at: null,
  retired_by: null,
});

export const GRANT_COLUMNS = {
  expires_at: 'text',
  revoked_at: 'text',
  revoked_by: 'text',
} satisfies ColumnTypes<'grants'>;

/** A grant is known by engagement, kind, target and access (grants have no ref). */
export const grantKey = (g: {
  engagement: string;
  kind: string;
  target: string | null;
  access: string | null;
}) => `${g.engagement}/${g.kind}${g.target ? `:${g.target}` : ''}${g.access ? `/${g.access}` : ''}`;

/**
 * `had`: the stored grant, when the document already revoked it (it keeps the time it was
 * revoked), or undefined.
 */
export function grantRow<I extends Id>(
  e: DocEngagement,
  g: DocGrant,
  had: { revoked_at: string | null; revoked_by: string | null } | undefined,
  ctx: RowContext<I>,
) {
  const revoked = g.revoked ?? false;
  return {
    production_id: ctx.productionId,
    engagement_id: ctx.need(e.ref),
    kind: g.kind,
    node_id: ctx.id(g.node),
    delivery_id: ctx.id(g.delivery),
    access: g.access ?? null,
    expires_at: iso(g.expires_at),
    revoked_at: revoked ? (had?.revoked_at ?? ctx.now) : null,
    revoked_by: revoked ? (had?.revoked_at ? had.revoked_by : 'document') : null,
    source: 'document' as const,
    created_at: ctx.now,
  };
}

/** The live engagements with their departments, and every grant. */
export async function readEngagements(db: Db, pid: number) {
  const [engagements, departments, grants] = await Promise.all([
    db
      .selectFrom('engagements')
      .where('production_id', '=', pid)
      .where('retired_at', 'is', null)
      .selectAll()
      .orderBy('id')
      .execute(),
    db
      .selectFrom('engagement_departments as ed')
      .innerJoin('engagements as e', 'e.id', 'ed.engagement_id')
      .where('e.production_id', '=', pid)
      .select(['ed.engagement_id', 'ed.department_id'])
      .execute(),
    db.selectFrom('grants').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
  ]);
  return { engagements, departments, grants };
}
export type StoredEngagements = Awaited<ReturnType<typeof readEngagements>>;
type StoredGrant = StoredEngagements['grants'][number];

export const engagementRefs = (e: StoredEngagements): Array<string | null> => e.engagements.map((r) => r.ref);

/** A grant on a retired scene, character or delivery names nothing the document has: null. */
function grantDoc(g: StoredGrant, ex: ExportContext): DocGrant | null {
  if (g.node_id !== null && !ex.isLive(g.node_id)) return null;
  const delivery = g.delivery_id === null ? undefined : ex.delivery.get(g.delivery_id);
  if (g.delivery_id !== null && !delivery) return null;
  return {
    kind: g.kind,
    ...(g.node_id !== null ? { node: ex.node.get(g.node_id) } : {}),
    ...(delivery ? { delivery } : {}),
    ...(g.access !== null ? { access: g.access } : {}),
    ...(g.expires_at !== null ? { expires_at: g.expires_at } : {}),
    ...(g.revoked_at !== null ? { revoked: true } : {}),
  };
}

export function engagementsDoc(e: StoredEngagements, ex: ExportContext) {
  const departmentsOf = groupBy(e.departments, (d) => d.engagement_id);
  const grantsOf = groupBy(e.grants, (g) => g.engagement_id);
  return {
    engagements: e.engagements.map((r): DocEngagement => ({
      ref: nameOf(ex.engagement, r.id),
      organisation: nameOf(ex.organisation, r.organisation_id),
      departments: (departmentsOf.get(r.id) ?? [])
        .map((d) => nameOf(ex.department, d.department_id))
        .filter(Boolean),
      grants: (grantsOf.get(r.id) ?? []).flatMap((g) => grantDoc(g, ex) ?? []),
    })),
  };
}
