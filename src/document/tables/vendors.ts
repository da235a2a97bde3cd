import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { iso, json, type RowContext } from './row-context.js';

/** Deliveries, engagements and their grants: what vendors reach. */

type Doc = Required<ProductionDocument>;
export type DocDelivery = Doc['deliveries'][number];
export type DocEngagement = Doc['engagements'][number];
export type DocGrant = NonNullable<DocEngagement['grants']>[number];

export const DELIVERY_COLUMNS = {
  title: 'text',
  kind: 'text',
  status: 'text',
  due: 'text',
  from_department_id: 'integer',
  to_department_id: 'integer',
  external_to: 'text',
  spec: 'text',
  sent_at: 'text',
  gating_approval_id: 'integer',
  position: 'integer',
  retired_at: 'text',
} satisfies ColumnTypes<'deliveries'>;

export const deliveryRow = <I extends Id>(d: DocDelivery, position: number, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: d.ref,
  title: d.title,
  kind: d.kind,
  status: d.status ?? 'draft',
  due: d.due ?? null,
  from_department_id: ctx.id(d.from_department),
  to_department_id: ctx.id(d.to_department),
  external_to: d.external_to ?? null,
  spec: json(d.spec ?? []),
  sent_at: iso(d.sent_at),
  gating_approval_id: ctx.id(d.gating_approval),
  position,
  retired_at: null,
});

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
 * `revokedAt`: when a stored grant the document already revoked was revoked (it keeps that
 * time), or null.
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
