import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import type { NodesTable } from '../../db/schema.js';
import { toBool, toInt } from '../../db/values.js';
import { errors } from '../../errors.js';
import { MAX_PAGE, openPage, type Page, type PagedList, type PageQuery } from '../../domain/page.js';
import { groupBy } from '../../util/group-by.js';
import { sceneRefOf } from '../scenes/scene-row.js';
import { ingredientsOfVersions } from '../versions/repository.js';
import { toIngredient, toLockedVersion, toVersionSummary } from '../versions/service.js';
import * as repo from './repository.js';
import type { AssetRecord, AssetRow, AssetVersion } from './schemas.js';

export interface AssetListQuery extends PageQuery {
  department?: string;
  kind?: string;
  status?: NodesTable['status'];
  released?: '1' | 'true' | '0' | 'false';
}

/** Rows are pages of (position, id): the order the production lists them. */
const ASSETS: PagedList = { name: 'assets', key: ['int', 'int'], maxLimit: MAX_PAGE };

type RowData = Omit<repo.AssetRowData, 'retired_at' | 'position'> & { retired_at?: string | null };

const toRow = (r: RowData): AssetRow => ({
  node_id: r.id,
  label: r.label,
  kind: r.kind,
  status: r.status,
  department: r.department ?? null,
  versions: toInt(r.version_count),
  updated_at: r.updated_at,
  ...(r.retired_at ? { retired_at: r.retired_at } : {}),
});

export async function listAssets(
  ctx: AppContext,
  principal: Principal,
  query: AssetListQuery = {},
): Promise<Page<AssetRow>> {
  const { window, close } = openPage(ASSETS, principal.productionId, { ...query });
  if (query.kind === 'scene') throw errors.invalid('kind', 'scenes are not assets (use GET /scenes)');
  let departmentId: number | undefined;
  if (query.department !== undefined) {
    const d = await repo.findDepartmentId(ctx.db, principal.productionId, query.department);
    if (!d) throw errors.invalid('department', `no department "${query.department}" in this production`);
    departmentId = d.id;
  }
  const rows = await repo.listAssets(
    ctx.db,
    principal.productionId,
    {
      departmentId,
      kind: query.kind,
      status: query.status,
      released: query.released === '1' || query.released === 'true',
    },
    window,
  );
  return close(rows, (r) => [r.position, r.id], toRow);
}

/** Every version of the node, and the ingredients of its released ones. */
async function versionsWithIngredients(ctx: AppContext, pid: number, nodeId: number) {
  const versions = await repo.versionsOfNode(ctx.db, nodeId);
  const released = versions.filter((v) => toBool(v.released)).map((v) => v.id);
  const ingredients = released.length ? await ingredientsOfVersions(ctx.db, pid, released) : [];
  return { versions, ingredients };
}

/**
 * The full asset record: the row's fields, every version (released ones in full with their
 * notes and ingredients, the others as locked stubs with their notes), the scenes that use it, and the
 * costumes of a character (or the characters wearing a costume). Writes return it too.
 */
export async function getAsset(ctx: AppContext, principal: Principal, nodeId: number): Promise<AssetRecord> {
  const pid = principal.productionId;
  const node = await repo.findAsset(ctx.db, pid, nodeId);
  if (!node) throw errors.notFound('asset');
  const [{ versions, ingredients }, notes, scenes, wears] = await Promise.all([
    versionsWithIngredients(ctx, pid, nodeId),
    repo.notesOfNode(ctx.db, nodeId),
    repo.scenesUsing(ctx.db, pid, nodeId),
    repo.wearsEdgesOf(ctx.db, pid, nodeId),
  ]);
  const notesOf = groupBy(notes, (n) => n.version_id);
  const notesOn = (versionId: number) =>
    (notesOf.get(versionId) ?? []).map((n) => ({
      id: n.id,
      text: n.text,
      author: n.author,
      created_at: n.created_at,
    }));
  const ingredientsOf = groupBy(ingredients, (g) => g.version_id);

  const record: AssetRecord = {
    node_id: node.id,
    label: node.label,
    kind: node.kind,
    status: node.status,
    department: node.department ?? null,
    versions: versions.map((v): AssetVersion => {
      if (!toBool(v.released)) return toLockedVersion(v, notesOn(v.id));
      return {
        ...toVersionSummary(v),
        released: true,
        locked: false,
        notes: notesOn(v.id),
        ingredients: (ingredientsOf.get(v.id) ?? []).map(toIngredient),
      };
    }),
    created_at: node.created_at,
    updated_at: node.updated_at,
    scenes: scenes.map((s) => ({ ...sceneRefOf(s, node.format), status: s.status })),
  };
  if (node.kind === 'character') {
    record.costumes = wears.filter((w) => w.from_node_id === node.id).map(toRow);
  }
  if (node.kind === 'costume') {
    record.worn_by = wears.filter((w) => w.from_node_id !== node.id).map(toRow);
  }
  return record;
}
