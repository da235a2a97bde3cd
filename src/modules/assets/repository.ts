import { VERSION_COLUMNS } from '../versions/repository.js';
import type { ExpressionBuilder } from 'kysely';
import type { Db } from '../../db/index.js';
import { changedSince, keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';
import type { Database, NodesTable } from '../../db/schema.js';
import { EDGE_USES, EDGE_WEARS, NODE_STATUSES, type OneOf } from '../../domain/vocabulary.js';

export interface AssetFilter {
  departmentId?: number;
  kind?: string;
  status?: NodesTable['status'];
  released?: boolean;
}

/** Only scenes are ever omitted: an asset's status is one of the node statuses. */
type AssetStatus = { status: OneOf<typeof NODE_STATUSES> };

const versionCount = (eb: ExpressionBuilder<Database, 'nodes'>) =>
  eb
    .selectFrom('versions')
    .whereRef('versions.node_id', '=', 'nodes.id')
    .select(eb.fn.countAll().as('n'))
    .as('version_count');

/** Asset rows (every node but scenes), in the order the production lists them; one page of them. */
export function listAssets(db: Db, productionId: number, filter: AssetFilter, window: PageWindow) {
  let q = db
    .selectFrom('nodes')
    .leftJoin('departments as d', 'd.id', 'nodes.department_id')
    .where('nodes.production_id', '=', productionId)
    .where('nodes.kind', '<>', 'scene')
    .select((eb) => [
      'nodes.id',
      'nodes.label',
      'nodes.kind',
      'nodes.status',
      'd.slug as department',
      'nodes.updated_at',
      'nodes.retired_at',
      'nodes.position',
      versionCount(eb),
    ]);
  q = changedSince(q, 'nodes.updated_at', 'nodes.retired_at', window.since);
  if (filter.departmentId !== undefined) q = q.where('nodes.department_id', '=', filter.departmentId);
  if (filter.kind !== undefined) q = q.where('nodes.kind', '=', filter.kind);
  if (filter.status !== undefined) q = q.where('nodes.status', '=', filter.status);
  if (filter.released) {
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('versions')
          .whereRef('versions.node_id', '=', 'nodes.id')
          .where('versions.released', '=', 1)
          .select('versions.id'),
      ),
    );
  }
  q = keysetPage(q, ['nodes.position', 'nodes.id'], 'asc', window);
  return q.orderBy('nodes.position').orderBy('nodes.id').$narrowType<AssetStatus>().execute();
}

export type AssetRowData = Awaited<ReturnType<typeof listAssets>>[number];

export function findDepartmentId(db: Db, productionId: number, slug: string) {
  return db
    .selectFrom('departments')
    .where('production_id', '=', productionId)
    .where('slug', '=', slug)
    .select('id')
    .executeTakeFirst();
}

/** One asset node (never a scene) with the production's format. */
export function findAsset(db: Db, productionId: number, nodeId: number) {
  return db
    .selectFrom('nodes')
    .innerJoin('productions as p', 'p.id', 'nodes.production_id')
    .leftJoin('departments as d', 'd.id', 'nodes.department_id')
    .where('nodes.production_id', '=', productionId)
    .where('nodes.id', '=', nodeId)
    .where('nodes.kind', '<>', 'scene')
    .where('nodes.retired_at', 'is', null)
    .select([
      'nodes.id',
      'nodes.label',
      'nodes.kind',
      'nodes.status',
      'd.slug as department',
      'nodes.created_at',
      'nodes.updated_at',
      'p.format',
    ])
    .$narrowType<AssetStatus>()
    .executeTakeFirst();
}

/** Every version of a node, released or not, oldest first (`nodeId` as for the notes below). */
export function versionsOfNode(db: Db, nodeId: number) {
  return db
    .selectFrom('versions as v')
    .leftJoin('media as m', 'm.id', 'v.media_id')
    .where('v.node_id', '=', nodeId)
    .select(VERSION_COLUMNS)
    .orderBy('v.version')
    .orderBy('v.id')
    .execute();
}

/**
 * Notes of every version of the node, released or not: the full asset record is read by
 * production-wide keys only, who may read a note landed on an unreleased version (their own
 * included). `nodeId` must be the production's own (getAsset found it first): see
 * releasedVersionsOf for why `versions` is not filtered on its production.
 */
export function notesOfNode(db: Db, nodeId: number) {
  return db
    .selectFrom('version_notes as vn')
    .innerJoin('versions as v', 'v.id', 'vn.version_id')
    .where('v.node_id', '=', nodeId)
    .select(['vn.id', 'vn.version_id', 'vn.text', 'vn.author', 'vn.created_at'])
    .orderBy('vn.created_at')
    .orderBy('vn.id')
    .execute();
}

/** Scenes that use the node, in script order. */
export function scenesUsing(db: Db, productionId: number, nodeId: number) {
  return db
    .selectFrom('edges')
    .innerJoin('nodes as s', 's.id', 'edges.from_node_id')
    .leftJoin('episodes as e', 'e.id', 's.episode_id')
    .where('edges.production_id', '=', productionId)
    .where('edges.to_node_id', '=', nodeId)
    .where('edges.kind', '=', EDGE_USES)
    .where('s.kind', '=', 'scene')
    .where('s.retired_at', 'is', null)
    .select(['s.id', 's.number', 's.slugline', 's.status', 's.episode_id', 'e.code as episode_code'])
    .orderBy('s.position')
    .orderBy('s.id')
    .execute();
}

/** Both directions of the wears edge: costumes a character wears and characters wearing a costume. */
export function wearsEdgesOf(db: Db, productionId: number, nodeId: number) {
  return db
    .selectFrom('edges')
    .innerJoin('nodes', (j) =>
      j.on((eb) =>
        eb.or([
          eb.and([eb('edges.from_node_id', '=', nodeId), eb('nodes.id', '=', eb.ref('edges.to_node_id'))]),
          eb.and([eb('edges.to_node_id', '=', nodeId), eb('nodes.id', '=', eb.ref('edges.from_node_id'))]),
        ]),
      ),
    )
    .leftJoin('departments as d', 'd.id', 'nodes.department_id')
    .where('edges.production_id', '=', productionId)
    .where('edges.kind', '=', EDGE_WEARS)
    .where('nodes.retired_at', 'is', null)
    .select((eb) => [
      'edges.from_node_id',
      'nodes.id',
      'nodes.label',
      'nodes.kind',
      'nodes.status',
      'd.slug as department',
      'nodes.updated_at',
      versionCount(eb),
    ])
    .orderBy('edges.position')
    .orderBy('nodes.position')
    .orderBy('nodes.id')
    .$narrowType<AssetStatus>()
    .execute();
}
