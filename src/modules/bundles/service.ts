import { Clamp, type NodeGrantKind } from '../../auth/clamp.js';
import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { EDGE_USES, EDGE_WEARS } from '../../domain/vocabulary.js';
import { errors } from '../../errors.js';
import { groupBy } from '../../util/group-by.js';
import { sceneRowToScene } from '../scenes/scene-row.js';
import { ingredientsOfVersions, toIngredient } from '../versions/ingredients.js';
import { releasedVersionsOf, toVersionSummary, type VersionRow } from '../versions/summary.js';
import { etagOf } from './etag.js';
import * as repo from './repository.js';
import { BUNDLE_VERSION, type CharacterBundle, type Ingredient, type SceneBundle } from './schemas.js';

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
