import type { Db } from '../../db/index.js';
import type { NodesTable } from '../../db/schema.js';
import { parseJson } from '../../db/values.js';
import { EDGE_USES, EDGE_WEARS } from '../../domain/vocabulary.js';
import { groupBy } from '../../util/group-by.js';
import type { Id } from '../sync/cells.js';
import type { ProductionDocument } from '../schema.js';
import type { ColumnTypes } from '../sync/write.js';
import { type ExportContext, nameOf } from './export-context.js';
import { iso, json, type RowContext } from './row-context.js';

/**
 * Scenes and assets: the rows of `nodes` each becomes (the edges between them are lists of
 * refs), and (for an export) the document objects the live nodes become.
 */

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

/** The live nodes and every edge, in the document's order. */
export async function readGraph(db: Db, pid: number) {
  const [nodes, edges] = await Promise.all([
    db
      .selectFrom('nodes')
      .where('production_id', '=', pid)
      .where('retired_at', 'is', null)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('edges')
      .where('production_id', '=', pid)
      .selectAll()
      .orderBy('position')
      .orderBy('id')
      .execute(),
  ]);
  return { nodes, edges };
}
export type StoredGraph = Awaited<ReturnType<typeof readGraph>>;

export const graphRefs = (g: StoredGraph): Array<string | null> => g.nodes.map((n) => n.ref);

export function nameGraph(g: StoredGraph, ex: ExportContext): void {
  ex.name(g.nodes, ex.node, (n) => (n.kind === 'scene' ? 'scene' : 'asset'));
}

// Only a scene is ever omitted (when a sync retires it, and retired nodes are not exported):
// an asset's stored status is always one of the statuses the document allows an asset.
const assetStatus = (s: NodesTable['status']) => s as NonNullable<DocAsset['status']>;

/** `versionsOf`: an asset's versions as the document lists them. */
export function graphDoc(
  g: StoredGraph,
  ex: ExportContext,
  versionsOf: (nodeId: number) => DocAsset['versions'],
) {
  const edgesFrom = groupBy(g.edges, (e) => e.from_node_id);
  const out = (from: number, kind: string) =>
    (edgesFrom.get(from) ?? [])
      .filter((e) => e.kind === kind && ex.isLive(e.to_node_id))
      .map((e) => nameOf(ex.node, e.to_node_id));
  const scenes = g.nodes
    .filter((n) => n.kind === 'scene')
    .map((n): DocScene => ({
      ref: nameOf(ex.node, n.id),
      number: n.number ?? '',
      slugline: n.slugline ?? '',
      synopsis: n.synopsis ?? '',
      status: n.status,
      revision_color: n.revision_color ?? 'white',
      ...(ex.episodic && n.episode_id !== null ? { episode: ex.episode.get(n.episode_id) } : {}),
      elements: parseJson<Record<string, string[]>>(n.elements, {}),
      assets: out(n.id, EDGE_USES),
    }));
  const assets = g.nodes
    .filter((n) => n.kind !== 'scene')
    .map((n): DocAsset => {
      const costumes = out(n.id, EDGE_WEARS);
      return {
        ref: nameOf(ex.node, n.id),
        label: n.label,
        kind: n.kind,
        department: ex.departmentOf(n.department_id),
        status: assetStatus(n.status),
        ...(costumes.length ? { costumes } : {}),
        created_at: n.created_at,
        updated_at: n.updated_at,
        versions: versionsOf(n.id),
      };
    });
  return { scenes, assets };
}
