import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { iso, json, type RowContext } from './row-context.js';

/** Scenes and assets: the rows of `nodes` each becomes (the edges between them are lists of refs). */

type Doc = Required<ProductionDocument>;
export type DocScene = Doc['scenes'][number];
export type DocAsset = Doc['assets'][number];

export const NODE_COLUMNS = {
  kind: 'text',
  label: 'text',
  status: 'text',
  department_id: 'integer',
  position: 'integer',
  number: 'text',
  slugline: 'text',
  synopsis: 'text',
  revision_color: 'text',
  elements: 'text',
  episode_id: 'integer',
  retired_at: 'text',
} satisfies ColumnTypes<'nodes'>;

export const sceneRow = <I extends Id>(s: DocScene, position: number, ctx: RowContext<I>) => ({
  production_id: ctx.productionId,
  ref: s.ref,
  kind: 'scene',
  label: `${s.number} ${s.slugline}`,
  status: s.status ?? 'planned',
  department_id: null,
  position,
  number: s.number,
  slugline: s.slugline,
  synopsis: s.synopsis ?? '',
  revision_color: s.revision_color ?? 'white',
  elements: json(s.elements ?? {}),
  episode_id: ctx.id(s.episode),
  retired_at: null,
  created_at: ctx.now,
  updated_at: ctx.now,
});

export function assetRow<I extends Id>(a: DocAsset, position: number, ctx: RowContext<I>) {
  const created = iso(a.created_at) ?? ctx.now;
  return {
    production_id: ctx.productionId,
    ref: a.ref,
    kind: a.kind ?? 'asset',
    label: a.label,
    status: a.status ?? 'planned',
    department_id: ctx.id(a.department),
    position,
    number: null,
    slugline: null,
    synopsis: null,
    revision_color: null,
    elements: null,
    episode_id: null,
    retired_at: null,
    created_at: created,
    updated_at: iso(a.updated_at) ?? created,
  };
}
