import type { Db } from '../../db/index.js';
import { keysetPage } from '../../db/keyset.js';
import { EDGE_USES, EDGE_WEARS } from '../../domain/vocabulary.js';
import { SCENE_COLUMNS } from '../scenes/scene-row.js';

/** Each function is one query, whatever the number of rows, so a bundle costs a fixed number. */

const NONE = [-1];
const ids = (list: readonly number[]) => (list.length ? [...list] : NONE);

export function findScene(db: Db, productionId: number, nodeId: number) {
  return db
    .selectFrom('nodes as n')
    .innerJoin('productions as p', 'p.id', 'n.production_id')
    .leftJoin('episodes as e', 'e.id', 'n.episode_id')
    .where('n.production_id', '=', productionId)
    .where('n.id', '=', nodeId)
    .where('n.kind', '=', 'scene')
    .where('n.retired_at', 'is', null)
    .select(SCENE_COLUMNS)
    .executeTakeFirst();
}

export function findCharacter(db: Db, productionId: number, nodeId: number) {
  return db
    .selectFrom('nodes')
    .where('production_id', '=', productionId)
    .where('id', '=', nodeId)
    .where('kind', '=', 'character')
    .where('retired_at', 'is', null)
    .select(['id', 'label', 'status'])
    .executeTakeFirst();
}

/** Nodes linked from one node by an edge kind, in edge order. */
export function linkedNodes(
  db: Db,
  productionId: number,
  fromNodeId: number,
  kind: typeof EDGE_USES | typeof EDGE_WEARS,
) {
  return db
    .selectFrom('edges as e')
    .innerJoin('nodes as n', 'n.id', 'e.to_node_id')
    .where('e.production_id', '=', productionId)
    .where('e.from_node_id', '=', fromNodeId)
    .where('e.kind', '=', kind)
    .where('n.retired_at', 'is', null)
    .select(['n.id', 'n.label', 'n.kind', 'n.status'])
    .orderBy('e.position')
    .orderBy('e.id')
    .execute();
}

export function shootDaysOfScene(db: Db, productionId: number, sceneId: number) {
  return db
    .selectFrom('shoot_days as d')
    .where('d.production_id', '=', productionId)
    .where('d.id', 'in', (eb) =>
      eb.selectFrom('shoot_strips as s').where('s.scene_node_id', '=', sceneId).select('s.shoot_day_id'),
    )
    .select(['d.id', 'd.day_number', 'd.date', 'd.status', 'd.general_call'])
    .orderBy('d.date')
    .orderBy('d.day_number')
    .orderBy('d.id')
    .execute();
}

/**
 * Approvals on the given nodes, which must be the production's own (found by the bundle's
 * production-scoped queries). Not filtered on the production again: that would offer the
 * planner `approvals_production_status`, a walk of every approval of the production, which
 * SQLite picks whenever statistics are missing (bench/FINDINGS.md §1).
 */
export function approvalsOnNodes(db: Db, nodeIds: readonly number[]) {
  return db
    .selectFrom('approvals')
    .where('subject_node_id', 'in', ids(nodeIds))
    .select(['id', 'title', 'status', 'mode', 'due', 'department_id'])
    .orderBy('id')
    .execute();
}

export function notesOnNodes(db: Db, productionId: number, nodeIds: readonly number[]) {
  return db
    .selectFrom('department_notes')
    .where('production_id', '=', productionId)
    .where('node_id', 'in', ids(nodeIds))
    .select(['id', 'summary', 'created_at', 'department_id'])
    .orderBy('id')
    .execute();
}

/**
 * One kind of bundle node (live scenes or characters) in list order, `(position, id)` after
 * `after`, at most `take` rows; only `nodeIds` when given (an engagement's granted nodes).
 */
export function bundleNodes(
  db: Db,
  productionId: number,
  kind: 'scene' | 'character',
  nodeIds: readonly number[] | null,
  after: readonly number[] | undefined,
  take: number | undefined,
) {
  let q = db
    .selectFrom('nodes as n')
    .innerJoin('productions as p', 'p.id', 'n.production_id')
    .leftJoin('episodes as ep', 'ep.id', 'n.episode_id')
    .where('n.production_id', '=', productionId)
    .where('n.kind', '=', kind)
    .where('n.retired_at', 'is', null)
    .select([
      'n.id',
      'n.label',
      'n.number',
      'n.slugline',
      'n.status',
      'n.position',
      'n.episode_id',
      'ep.code as episode_code',
      'p.format',
    ]);
  if (nodeIds !== null) q = q.where('n.id', 'in', ids(nodeIds));
  q = keysetPage(q, ['n.position', 'n.id'], 'asc', {
    limit: undefined,
    after: after ? [...after] : undefined,
    since: undefined,
  });
  if (take !== undefined) q = q.limit(take);
  return q.orderBy('n.position').orderBy('n.id').execute();
}
