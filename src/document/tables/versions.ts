import { fromBool } from '../../db/values.js';
import type { DocAsset, DocVersion } from '../schema.js';
import type { Id } from '../sync/cells.js';
import type { ColumnTypes } from '../sync/write.js';
import { iso, type RowContext } from './row-context.js';

/** Versions of assets, their ingredients and the notes an export carries. */

export type DocIngredient = NonNullable<DocVersion['ingredients']>[number];

export const VERSION_COLUMNS = {
  node_id: 'integer',
  version: 'integer',
  variant: 'text',
  status: 'text',
  released: 'integer',
  archived: 'integer',
  note: 'text',
  media_id: 'integer',
  created_by: 'text',
  created_by_person_id: 'integer',
  created_at: 'text',
} satisfies ColumnTypes<'versions'>;

/** A version without a ref is known by its asset and number. */
export const versionKey = (asset: Pick<DocAsset, 'ref'>, v: Pick<DocVersion, 'ref' | 'version'>): string =>
  v.ref ?? `${asset.ref}#v${v.version}`;

/**
 * `created_by` names a person of the document (then the row keeps the person and their name)
 * or is free text (someone outside the production).
 */
export function versionRow<I extends Id>(
  v: DocVersion,
  node: I,
  media: I | null,
  personName: (ref: string) => string | undefined,
  ctx: RowContext<I>,
) {
  const name = v.created_by ? personName(v.created_by) : undefined;
  return {
    production_id: ctx.productionId,
    ref: v.ref ?? null,
    node_id: node,
    version: v.version,
    variant: v.variant ?? 'Main',
    status: v.status ?? (v.released ? 'approved' : 'wip'),
    released: fromBool(v.released),
    archived: fromBool(v.archived),
    note: v.note ?? null,
    media_id: media,
    created_by: name ?? v.created_by ?? null,
    created_by_person_id: name !== undefined ? ctx.need(v.created_by!) : null,
    created_at: iso(v.created_at),
    source: 'document' as const,
  };
}

export const INGREDIENT_COLUMNS = {
  version_id: 'integer',
  kind: 'text',
  label: 'text',
  relation: 'text',
  media_id: 'integer',
  position: 'integer',
} satisfies ColumnTypes<'ingredients'>;

export const ingredientRow = <I extends Id>(
  g: DocIngredient,
  position: number,
  version: I,
  media: I | null,
  ctx: RowContext<I>,
) => ({
  production_id: ctx.productionId,
  ref: g.ref ?? null,
  version_id: version,
  kind: g.kind,
  label: g.label,
  relation: g.relation ?? null,
  media_id: media,
  position,
});

export interface WantedNote {
  text: string;
  author: string | null;
  created_at: string;
}

export const notesOf = (v: DocVersion): WantedNote[] =>
  (v.notes ?? []).map((n) => ({ text: n.text, author: n.author ?? null, created_at: iso(n.created_at)! }));
