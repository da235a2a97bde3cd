import { createHash } from 'node:crypto';
import { Clamp, type NodeGrantKind } from '../../auth/clamp.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { EDGE_USES, EDGE_WEARS } from '../../domain/vocabulary.js';
import { MAX_PAGE, openPage, type Page, type PagedList } from '../../domain/page.js';
import { errors } from '../../errors.js';
import { groupBy } from '../../util/group-by.js';
import { sceneRefOf, sceneRowToScene } from '../scenes/scene-row.js';
import { ingredientsOfVersions, releasedVersionsOf, type VersionRow } from '../versions/repository.js';
import { toIngredient, toVersionSummary } from '../versions/service.js';
import * as repo from './repository.js';
import {
  BUNDLE_VERSION,
  type BundleEntry,
  type BundleListQuery,
  type CharacterBundle,
  type Ingredient,
  type SceneBundle,
} from './schemas.js';

/*
 * Bundles are assembled in a fixed number of queries (clamp: 0, or 1-2 asking only for the
 * grant on this node; scene: 6; character: 4),
 * whatever the size of the scene. A missing node, another production's node and a node without
 * a live grant all throw the very same error.
 */

const versionsByNode = (rows: VersionRow[]) => groupBy(rows, (r) => r.node_id);

export async function sceneBundle(
  ctx: AppContext,
  principal: Principal,
  nodeId: number,
): Promise<SceneBundle> {
  const clamp = await Clamp.load(ctx.db, principal, { kinds: ['scene'], nodeId });
  const notFound = () => errors.notFound('scene');
  if (!clamp.reachesNode('scene', nodeId)) throw notFound();
  const pid = principal.productionId;
  const scene = await repo.findScene(ctx.db, pid, nodeId);
  if (!scene) throw notFound();

  const assets = await repo.linkedNodes(ctx.db, pid, scene.id, EDGE_USES);
  const assetIds = assets.map((a) => a.id);
  const subjects = [scene.id, ...assetIds];
  const [versions, days, approvals, notes] = await Promise.all([
    releasedVersionsOf(ctx.db, assetIds),
    repo.shootDaysOfScene(ctx.db, pid, scene.id),
    repo.approvalsOnNodes(ctx.db, subjects),
    repo.notesOnNodes(ctx.db, pid, subjects),
  ]);
  const released = versionsByNode(versions);

  const doc: Omit<SceneBundle, 'etag'> = {
    version: BUNDLE_VERSION,
    scene: sceneRowToScene(scene),
    assets: assets.map((a) => ({
      node_id: a.id,
      label: a.label,
      kind: a.kind,
      status: a.status,
      released_versions: (released.get(a.id) ?? []).map(toVersionSummary),
    })),
    shoot_days: days.map((d) => ({
      id: d.id,
      day_number: d.day_number,
      date: d.date,
      status: d.status,
      general_call: d.general_call,
    })),
    approvals: clamp
      .narrowByDepartment(approvals, (a) => a.department_id)
      .map((a) => ({ id: a.id, title: a.title, status: a.status, mode: a.mode, due: a.due })),
    department_notes: clamp
      .narrowByDepartment(notes, (n) => n.department_id)
      .map((n) => ({ id: n.id, summary: n.summary, created_at: n.created_at })),
  };
  return { ...doc, etag: etagOf(doc) };
}

/**
 * The door alone, for an answer already assembled: whether this key reaches the node now.
 * No query for a production-wide key (the node's existence is part of the cached answer,
 * filed under the revision); one for an engagement (its live grant on this node).
 */
export async function reachesBundle(
  ctx: AppContext,
  principal: Principal,
  kind: NodeGrantKind,
  nodeId: number,
): Promise<void> {
  if (principal.engagementId === null) return;
  const clamp = await Clamp.load(ctx.db, principal, { kinds: [kind], nodeId, departments: false });
  if (!clamp.reachesNode(kind, nodeId)) throw errors.notFound(kind);
}

export async function characterBundle(
  ctx: AppContext,
  principal: Principal,
  nodeId: number,
): Promise<CharacterBundle> {
  const clamp = await Clamp.load(ctx.db, principal, { kinds: ['character'], nodeId, departments: false });
  const notFound = () => errors.notFound('character');
  if (!clamp.reachesNode('character', nodeId)) throw notFound();
  const pid = principal.productionId;
  const character = await repo.findCharacter(ctx.db, pid, nodeId);
  if (!character) throw notFound();

  const costumes = await repo.linkedNodes(ctx.db, pid, character.id, EDGE_WEARS);
  const versions = await releasedVersionsOf(
    ctx.db,
    costumes.map((c) => c.id),
  );
  const ingredients = await ingredientsOfVersions(
    ctx.db,
    pid,
    versions.map((v) => v.id),
  );
  const released = versionsByNode(versions);
  const ingredientsOfVersion = groupBy(ingredients, (i) => i.version_id);

  const doc: Omit<CharacterBundle, 'etag'> = {
    version: BUNDLE_VERSION,
    character: { node_id: character.id, label: character.label, status: character.status },
    costumes: costumes.map((c) => {
      const own = released.get(c.id) ?? [];
      const seen = new Set<string>();
      const union: Ingredient[] = [];
      // versions come oldest first, so the first occurrence (and its id) is the earliest one
      for (const v of own) {
        for (const g of ingredientsOfVersion.get(v.id) ?? []) {
          const key = JSON.stringify([g.kind, g.label, g.relation, g.media_id]);
          if (seen.has(key)) continue;
          seen.add(key);
          union.push(toIngredient(g));
        }
      }
      return {
        node_id: c.id,
        label: c.label,
        status: c.status,
        released_versions: own.map(toVersionSummary),
        ingredients: union,
      };
    }),
  };
  return { ...doc, etag: etagOf(doc) };
}

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped. Two equal
 * documents always serialise to the same bytes, whatever order they were assembled in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** A strong, quoted entity tag over the document (which must not yet carry its etag). */
export const etagOf = (doc: unknown): string =>
  `"${createHash('sha256').update(canonicalJson(doc)).digest('base64url')}"`;

/**
 * The bundles a key may fetch: scenes in script order, then characters in cast order. A page
 * is keyed by (kind's rank, position, id), so writes during a walk never skip or repeat one.
 */
const BUNDLES: PagedList = { name: 'bundles', key: ['int', 'int', 'int'], maxLimit: MAX_PAGE };
const KINDS: readonly NodeGrantKind[] = ['scene', 'character'];

type NodeRow = Awaited<ReturnType<typeof repo.bundleNodes>>[number];

const isoOrNull = (at: string | null | undefined): string | null =>
  at === null || at === undefined ? null : new Date(Date.parse(at)).toISOString();

function toEntry(kind: NodeGrantKind, row: NodeRow, expiresAt: string | null): BundleEntry {
  const expires_at = isoOrNull(expiresAt);
  if (kind === 'character') {
    return { kind, node_id: row.id, label: row.label, status: row.status, expires_at };
  }
  return { kind, ...sceneRefOf(row, row.format), status: row.status, expires_at };
}

/**
 * Through the one clamp, judged for this request: a production-wide key reaches every live
 * scene and character of its production; an engagement-bound key exactly the nodes its live
 * scene and character grants name (revoked or expired grants, archived engagements: nothing).
 * At most one query per kind, plus the clamp's one for an engagement.
 */
export async function listBundles(
  ctx: AppContext,
  principal: Principal,
  query: BundleListQuery = {},
): Promise<Page<BundleEntry>> {
  const clamp = await Clamp.load(ctx.db, principal, { kinds: KINDS, departments: false });
  const { window, close } = openPage(BUNDLES, principal.productionId, { ...query });
  // the cursor's key is all whole numbers (BUNDLES.key), checked when it was opened
  const [fromRank = 0, ...fromKey] = (window.after ?? []) as number[];
  const rows: Array<{ rank: number; kind: NodeGrantKind; row: NodeRow; expiresAt: string | null }> = [];
  for (const [rank, kind] of KINDS.entries()) {
    if (rank < fromRank) continue;
    // one row more than the page tells whether another page follows
    const room = window.limit === undefined ? undefined : window.limit + 1 - rows.length;
    if (room !== undefined && room <= 0) break;
    const reach = clamp.productionWide ? null : clamp.grantedNodeExpiry(kind);
    if (reach !== null && reach.size === 0) continue;
    const after = rank === fromRank && window.after !== undefined ? fromKey : undefined;
    const found = await repo.bundleNodes(
      ctx.db,
      principal.productionId,
      kind,
      reach && [...reach.keys()],
      after,
      room,
    );
    for (const row of found) rows.push({ rank, kind, row, expiresAt: reach?.get(row.id) ?? null });
  }
  return close(
    rows,
    (r) => [r.rank, r.row.position, r.row.id],
    (r) => toEntry(r.kind, r.row, r.expiresAt),
  );
}
