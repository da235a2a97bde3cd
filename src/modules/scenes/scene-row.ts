import type { Selectable } from 'kysely';
import type { NodesTable, ProductionsTable } from '../../db/schema.js';
import { parseJson } from '../../db/values.js';
import { episodeFields } from './episode.js';

/**
 * A scene as every answer shows it (the scene list, the scene bundle): one select, one mapper.
 * The columns come from `nodes as n` joined to `productions as p` and left-joined to
 * `episodes as e`.
 */
export const SCENE_COLUMNS = [
  'n.id',
  'n.number',
  'n.slugline',
  'n.synopsis',
  'n.status',
  'n.revision_color',
  'n.elements',
  'n.episode_id',
  'e.code as episode_code',
  'p.format',
] as const;

type Node = Selectable<NodesTable>;
export type SceneRow = Pick<
  Node,
  'id' | 'number' | 'slugline' | 'synopsis' | 'status' | 'revision_color' | 'elements' | 'episode_id'
> & { episode_code: string | null; format: Selectable<ProductionsTable>['format'] };

/** The fields of a scene both answers share; the episode keys only on an episodic production. */
export function sceneRowToScene(row: SceneRow) {
  return {
    node_id: row.id,
    number: row.number ?? '',
    slugline: row.slugline ?? '',
    synopsis: row.synopsis ?? '',
    status: row.status,
    revision_color: row.revision_color ?? 'white',
    elements: parseJson<Record<string, string[]>>(row.elements, {}),
    ...episodeFields(row.format, row.episode_id, row.episode_code),
  };
}

/** What a scene reference is made of, wherever another answer names a scene. */
export interface SceneRefRow {
  id: number;
  number: string | null;
  slugline: string | null;
  episode_id: number | null;
  episode_code: string | null;
}

/**
 * A scene as other answers name it (an asset's scenes, a shoot day's strips, a script change,
 * the bundle list): its id, number and slugline, and its episode on an episodic production.
 */
export function sceneRefOf(row: SceneRefRow, format: string) {
  return {
    node_id: row.id,
    number: row.number ?? '',
    slugline: row.slugline ?? '',
    ...episodeFields(format, row.episode_id, row.episode_code),
  };
}
