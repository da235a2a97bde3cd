import { Type, type Static } from 'typebox';
import { SCRIPT_CHANGE_STATUSES } from '../../domain/vocabulary.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';
import { SceneRef } from '../scenes/schemas.js';

export const ScriptChange = Type.Object(
  {
    id: Type.Integer(),
    change: Type.String({ description: 'Open set: added, modified, omitted, removed, …' }),
    summary: Type.String(),
    status: StringEnum(SCRIPT_CHANGE_STATUSES),
    detected_at: Timestamp,
    updated_at: Timestamp,
    scene: Nullable(SceneRef),
    episode_id: Type.Optional(Type.Integer({ description: 'Episodic productions only (absent otherwise)' })),
    episode_code: Type.Optional(Type.String({ description: 'Same presence rule as episode_id' })),
  },
  { $id: 'ScriptChange', title: 'Script change' },
);
export type ScriptChange = Static<typeof ScriptChange>;

export const ScriptChangeQuery = Type.Object({
  status: Type.Optional(
    StringEnum([...SCRIPT_CHANGE_STATUSES, 'all'] as const, {
      default: 'pending',
      description: 'Default `pending`; `all` lists every status',
    }),
  ),
  episode_id: Type.Optional(
    Id(
      "Episodic productions: only this episode's changes (an id that is not an episode of this production is 422). " +
        "Without it, the production's current episode (every episode when none is set). Ignored on a single production.",
    ),
  ),
  all_episodes: Type.Optional(
    StringEnum(['true', 'false', '1', '0'] as const, {
      description:
        'Episodic productions: `true` widens to every episode; cannot be combined with episode_id (422)',
    }),
  ),
});
