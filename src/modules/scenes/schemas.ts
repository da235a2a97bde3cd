import { Type, type Static } from 'typebox';
import { SCENE_STATUSES } from '../../domain/vocabulary.js';
import { pageQuery } from '../../domain/schema-kit.js';
import { RetiredAt, StringEnum, Timestamp } from '../../domain/schema-kit.js';

const episodeId = Type.Integer({
  description: 'Present only on an episodic production; the key is omitted otherwise (never null)',
});
const episodeCode = Type.String({ description: 'Same presence rule as episode_id' });

export const Scene = Type.Object(
  {
    node_id: Type.Integer({ description: 'Graph node id' }),
    number: Type.String(),
    slugline: Type.String(),
    synopsis: Type.String(),
    status: StringEnum(SCENE_STATUSES, {
      description: 'planned, active, blocked, done; a script revision can also mark a scene omitted',
    }),
    revision_color: Type.String(),
    elements: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: 'Free-form: arrays of names keyed by element type (cast, props, vfx, …)',
    }),
    episode_id: Type.Optional(episodeId),
    episode_code: Type.Optional(episodeCode),
    updated_at: Timestamp,
    retired_at: Type.Optional(RetiredAt),
  },
  {
    $id: 'Scene',
    title: 'Scene',
    examples: [
      {
        node_id: 1,
        number: '1',
        slugline: 'INT. WARD 9 - NIGHT',
        synopsis: 'MARA QUINN starts her shift on the last open ward of St Brigid’s.',
        status: 'done',
        revision_color: 'white',
        elements: { cast: ['Mara Quinn', 'Dr Tobias Fenn'], props: ['Drug trolley'] },
        episode_id: 1,
        episode_code: '101',
        updated_at: '2026-11-23T19:02:11.483Z',
      },
    ],
  },
);

export const SceneListQuery = Type.Object(pageQuery('scenes'));
export type Scene = Static<typeof Scene>;

/** How other records point at a scene (asset records, schedule strips, script changes). */
export const SceneRef = Type.Object(
  {
    node_id: Type.Integer(),
    number: Type.String(),
    slugline: Type.String(),
    status: Type.String({ description: 'As on GET /scenes' }),
    episode_id: Type.Optional(episodeId),
    episode_code: Type.Optional(episodeCode),
  },
  { $id: 'SceneRef', title: 'Scene reference' },
);
export type SceneRef = Static<typeof SceneRef>;
