import { EDGE_USES, EDGE_WEARS } from '../../domain/vocabulary.js';
import { idOf, same, type Id } from '../sync/cells.js';
import type { SyncContext } from '../sync/context.js';
import { assignRefs, diffKeyed, type KeyedDiff } from '../sync/keyed.js';
import { referencedByAny } from '../sync/references.js';
import { orderPositions } from '../sync/order.js';
import { apiKey, madeUpId, madeUpRef } from '../sync/made-up-refs.js';
import { insertRows } from '../sync/write.js';
import { assetRow, NODE_COLUMNS, sceneRow, type DocAsset } from '../tables/graph.js';
import { zip } from '../../util/zip.js';
import type { ApprovalsSection } from './approvals.js';

/*
 * The graph: scenes and assets (nodes, by ref) and the edges between them (a scene uses
 * assets, a character wears costumes). Nodes the API created have no ref and are never
 * touched. A node whose ref left the document is retired when anything still refers to it
 * (versions, media, activity, grants, a decided approval) — a scene also becomes omitted —
 * and deleted when nothing does.
 */

type EdgeKind = typeof EDGE_USES | typeof EDGE_WEARS;

interface WantedEdges {
  kind: EdgeKind;
  to: Id[];
}

/** Every node the document has named, and every live one (the API's, without a ref, included). */
const readStoredNodes = async (ctx: SyncContext, pid: number | null) =>
  pid === null
    ? []
    : ctx.db
        .selectFrom('nodes')
        .where('production_id', '=', pid)
        // assets the API created (no ref) are read too: an edited export names them by made-up refs
        .where((eb) => eb.or([eb('ref', 'is not', null), eb('retired_at', 'is', null)]))
        .select([
          'id',
          'ref',
          'kind',
          'label',
          'status',
          'department_id',
          'position',
          'number',
          'slugline',
          'synopsis',
          'revision_color',
          'elements',
          'episode_id',
          'retired_at',
        ])
        .execute();

export class GraphSection {
  nodes!: KeyedDiff<'nodes'>;
  /** Stored ids of nodes whose ref left the document (retired or deleted now, or retired before). */
  readonly removedIds = new Set<number>();
  private readonly retiring: Array<{ id: number; scene: boolean }> = [];
  private readonly edgesWanted = new Map<string, WantedEdges>();
  private readonly edgesStored = new Map<number, Array<{ kind: string; to: number }>>();

  async diff(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const doc = ctx.doc;
    const rows = await readStoredNodes(ctx, pid);
    await this.readEdges(ctx, pid);
    const scenes = doc.scenes ?? [];
    const assets = doc.assets ?? [];
    const apiMade = new Set(rows.filter((r) => r.ref === null).map((r) => r.id));
    const keyOf = (ref: string) => {
      const id = madeUpId('asset', ref);
      if (id === null || !apiMade.has(id)) return ref;
      ctx.apiMade.set(ref, madeUpRef('asset', id));
      return apiKey(id);
    };
    const keyedAssets = assets.map((a) => ({ a, key: keyOf(a.ref) }));
    const storedPositions = new Map(rows.map((r) => [r.ref ?? apiKey(r.id), r.position]));
    const scenePositions = orderPositions(
      scenes.map((s) => s.ref),
      storedPositions,
    );
    const assetPositions = orderPositions(
      keyedAssets.map(({ key }) => key),
      storedPositions,
    );
    // every ref gets its id before any edge names one
    const wantedScenes = zip(scenes, scenePositions).map(([s, position]) => ({
      key: s.ref,
      ref: s.ref,
      row: sceneRow(s, position, ctx),
    }));
    const wantedAssets = zip(keyedAssets, assetPositions).map(([{ a, key }, position]) => ({
      key,
      ref: a.ref,
      row: assetRow(a, position, ctx),
    }));
    const stored = rows.map((r) => ({ id: r.id, key: r.ref ?? apiKey(r.id), values: r }));
    const wanted = [...wantedScenes, ...wantedAssets];
    // edges name nodes of this very section, so every node gets its id before any is compared
    assignRefs(ctx, stored, wanted);
    this.wantEdges(ctx, keyedAssets);
    this.nodes = diffKeyed(ctx, {
      kind: (w) => ((w.row as { kind: string }).kind === 'scene' ? 'scenes' : 'assets'),
      table: 'nodes',
      columns: NODE_COLUMNS,
      stored,
      wanted,
      children: (s, w) =>
        this.edgesDiffer(s.id, w.key) ? [w.row.kind === 'scene' ? 'assets' : 'costumes'] : [],
      // what the API created, the API owns: the document may name it, never change it
      stands: (s) => (s.values.ref === null ? [...Object.keys(NODE_COLUMNS), 'assets', 'costumes'] : []),
      keptReason: (s) => (s.values.ref === null ? 'created through the API' : 'changed through the API'),
      onUpdate: () => ({ updated_at: ctx.now }),
    });
    // an API-made asset the document does not name is simply not the document's
    this.nodes.removed = this.nodes.removed.filter((r) => r.values.ref !== null);
    for (const r of this.nodes.removed) this.removedIds.add(r.id);
  }

  private async readEdges(ctx: SyncContext, pid: number | null): Promise<void> {
    if (pid === null) return;
    const edges = await ctx.db
      .selectFrom('edges')
      .where('production_id', '=', pid)
      .select(['from_node_id', 'to_node_id', 'kind'])
      .orderBy('from_node_id')
      .orderBy('kind')
      .orderBy('position')
      .orderBy('id')
      .execute();
    for (const e of edges) {
      const list = this.edgesStored.get(e.from_node_id);
      const edge = { kind: e.kind, to: e.to_node_id };
      if (list) list.push(edge);
      else this.edgesStored.set(e.from_node_id, [edge]);
    }
  }

  /** The edges the document wants: from each scene to the assets it uses, from each character to its costumes. */
  private wantEdges(ctx: SyncContext, assets: ReadonlyArray<{ a: DocAsset; key: string }>): void {
    for (const s of ctx.doc.scenes ?? []) {
      this.edgesWanted.set(s.ref, { kind: EDGE_USES, to: (s.assets ?? []).map((r) => ctx.need(r)) });
    }
    for (const { a, key } of assets) {
      if ((a.costumes ?? []).length) {
        this.edgesWanted.set(key, {
          kind: EDGE_WEARS,
          to: (a.costumes ?? []).map((r) => ctx.need(r)),
        });
      }
    }
  }

  private edgesDiffer(storedId: number, key: string): boolean {
    const stored = this.edgesStored.get(storedId) ?? [];
    const wanted = this.edgesWanted.get(key);
    const want = wanted ? wanted.to.map((to) => ({ kind: wanted.kind, to })) : [];
    if (stored.length !== want.length) return true;
    return zip(stored, want).some(([e, w]) => e.kind !== w.kind || !same(e.to, w.to));
  }

  async settle(ctx: SyncContext, deps: { approvals: ApprovalsSection }): Promise<void> {
    const live = this.nodes.removed.filter(
      (r) => r.values.retired_at === null || r.values.retired_at === undefined,
    );
    const ids = live.map((r) => r.id);
    const referenced = ids.length
      ? await referencedByAny(ctx, ids, [
          ['versions', 'node_id', {}, 'its versions'],
          ['media', 'node_id', {}, 'media'],
          ['grants', 'node_id', {}, 'grants'],
          [
            'approvals',
            'subject_node_id',
            { exclude: deps.approvals.keptRows().subjectNotKept },
            'a decided approval',
          ],
          ['activity', 'node_id', {}, 'the activity feed'],
        ])
      : new Map<number, string>();
    for (const r of live) {
      const scene = r.values.kind === 'scene';
      const kind = scene ? 'scenes' : 'assets';
      const by = referenced.get(r.id);
      if (by) {
        this.retiring.push({ id: r.id, scene });
        ctx.record(kind, 'retired', r.key, r.id, {
          reason: `${scene ? 'omitted; ' : ''}referred to by ${by}`,
        });
      } else {
        this.nodes.deletes.push(r.id);
        ctx.record(kind, 'deleted', r.key, r.id);
      }
    }
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.nodes.deleteRemoved(ctx);
    const ids = this.retiring.map((r) => r.id);
    for (let i = 0; i < ids.length; i += 1000) {
      const part = ids.slice(i, i + 1000);
      await ctx.db
        .updateTable('nodes')
        .set({ retired_at: ctx.now, updated_at: ctx.now })
        .where('id', 'in', part)
        .execute();
      await ctx.db
        .updateTable('nodes')
        .set({ status: 'omitted' })
        .where('id', 'in', part)
        .where('kind', '=', 'scene')
        .execute();
    }
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.nodes.write(ctx);
    const rewrite = this.nodes.updates.filter((u) => u.children.length).map((u) => u.id);
    for (let i = 0; i < rewrite.length; i += 1000) {
      await ctx.db
        .deleteFrom('edges')
        .where('from_node_id', 'in', rewrite.slice(i, i + 1000))
        .execute();
    }
    const from: Array<{ id: Id; key: string }> = [
      ...this.nodes.creates.map((c) => ({ id: c.pending, key: c.key })),
      ...this.nodes.updates.filter((u) => u.children.length).map((u) => ({ id: u.id, key: u.key })),
    ];
    const pid = idOf(ctx.productionId);
    await insertRows(
      ctx.db,
      'edges',
      from.flatMap(({ id, key }) => {
        const e = this.edgesWanted.get(key);
        if (!e) return [];
        return e.to.map((to, position) => ({
          production_id: pid,
          from_node_id: idOf(id),
          to_node_id: idOf(to),
          kind: e.kind,
          position,
        }));
      }),
    );
  }
}
