import type { Db } from '../../db/index.js';
import { fromBool, toBool } from '../../db/values.js';
import { groupBy } from '../../util/group-by.js';
import type { DocVersion } from '../schema.js';
import type { Id } from '../sync/cells.js';
import type { ColumnTypes } from '../sync/write.js';
import type { ExportContext } from './export-context.js';
import { iso, type RowContext } from './row-context.js';

/**
 * Versions of assets, their ingredients and the notes an export carries: the rows each
 * document object becomes, and (for an export) the document objects the stored rows become.
 */

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
  // an empty created_by names no one
  const by = v.created_by || null;
  const name = by === null ? undefined : personName(by);
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
    created_by_person_id: by !== null && name !== undefined ? ctx.need(by) : null,
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
  (v.notes ?? []).map((n) => ({ text: n.text, author: n.author ?? null, created_at: iso(n.created_at) }));

/** Every version, ingredient and note, in the document's order. */
export async function readVersions(db: Db, pid: number) {
  const [versions, ingredients, notes] = await Promise.all([
    db
      .selectFrom('versions')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('version')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('ingredients')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('version_notes')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
  ]);
  return { versions, ingredients, notes };
}
export type StoredVersions = Awaited<ReturnType<typeof readVersions>>;

export const versionRefs = (v: StoredVersions): Array<string | null> =>
  [...v.versions, ...v.ingredients].map((r) => r.ref);

/**
 * Versions of live assets get a ref when they have one, when an approval is on them
 * (`subjects`), and when they landed through the API: an edited export (or a later document)
 * may open an approval on a landed version.
 */
export function nameVersions(v: StoredVersions, subjects: ReadonlySet<number>, ex: ExportContext): void {
  for (const r of v.versions) {
    if (!ex.isLive(r.node_id)) continue;
    if (r.ref || r.source !== 'document' || subjects.has(r.id)) ex.version.set(r.id, ex.refFor(r, 'version'));
  }
}

/** Each asset's versions as the document lists them, by the asset's node id. */
export function versionsDoc(v: StoredVersions, ex: ExportContext): (nodeId: number) => DocVersion[] {
  const versionsOf = groupBy(v.versions, (r) => r.node_id);
  const ingredientsOf = groupBy(v.ingredients, (g) => g.version_id);
  const notesOn = groupBy(v.notes, (n) => n.version_id);
  const docOf = (r: StoredVersions['versions'][number]): DocVersion => {
    const byPerson = r.created_by_person_id !== null ? ex.person.get(r.created_by_person_id) : undefined;
    const own = ingredientsOf.get(r.id) ?? [];
    const said = notesOn.get(r.id) ?? [];
    return {
      ...(ex.version.has(r.id) ? { ref: ex.version.get(r.id) } : {}),
      version: r.version,
      variant: r.variant,
      status: r.status,
      released: toBool(r.released),
      note: r.note,
      media: ex.fileOf(r.media_id),
      created_by: byPerson ?? r.created_by,
      created_at: r.created_at,
      archived: toBool(r.archived),
      ...(own.length
        ? {
            ingredients: own.map((g) => ({
              ...(g.ref ? { ref: ex.refFor(g, 'ingredient') } : {}),
              kind: g.kind,
              label: g.label,
              relation: g.relation,
              media: ex.fileOf(g.media_id),
            })),
          }
        : {}),
      ...(said.length
        ? { notes: said.map((x) => ({ text: x.text, author: x.author, created_at: x.created_at })) }
        : {}),
    };
  };
  return (nodeId) => (versionsOf.get(nodeId) ?? []).map(docOf);
}
