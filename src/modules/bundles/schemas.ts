import { Type, type Static } from 'typebox';
import { MAX_PAGE } from '../../domain/page.js';
import { CalendarDate, CursorParam, Id, MediaId, Nullable, Timestamp } from '../../domain/schema-kit.js';
import { VERSION_EXAMPLE, VersionSummary } from '../versions/schemas.js';

/**
 * Shape version of the bundle documents, carried in every bundle so a client can tell which shape
 * it holds. Additive changes keep it; bump it only with a breaking change (which ships under a new
 * API version).
 */
export const BUNDLE_VERSION = 1;

const EtagField = Type.String({
  description:
    'The bundle ETag, exactly as sent in the ETag header (a quoted strong tag). Send it back in If-None-Match to get 304 while the bundle is unchanged.',
});

const BundleVersion = Type.Integer({
  description: 'Shape version of the bundle document (currently 1); bumped only on a breaking change',
});

export const BundleScene = Type.Object(
  {
    node_id: Type.Integer(),
    number: Type.String(),
    slugline: Type.String(),
    synopsis: Type.String(),
    status: Type.String({ description: 'planned, active, blocked, done, or omitted by a script revision' }),
    revision_color: Type.String(),
    elements: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: 'Free-form: arrays of names keyed by element type',
    }),
    episode_id: Type.Optional(Type.Integer({ description: 'Only on an episodic production' })),
    episode_code: Type.Optional(Type.String({ description: 'Only on an episodic production' })),
  },
  { title: 'Scene' },
);

export const BundleAsset = Type.Object(
  {
    node_id: Type.Integer(),
    label: Type.String(),
    kind: Type.String(),
    status: Type.String(),
    released_versions: Type.Array(VersionSummary, { description: 'Released versions only, oldest first' }),
  },
  { title: 'Scene bundle asset' },
);

export const BundleShootDay = Type.Object({
  id: Type.Integer(),
  day_number: Type.Integer(),
  date: CalendarDate,
  status: Type.String(),
  general_call: Nullable(Type.String({ description: 'HH:MM' })),
});

export const BundleApproval = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  status: Type.String(),
  mode: Type.String(),
  due: Nullable(CalendarDate),
});

export const BundleDepartmentNote = Type.Object({
  id: Type.Integer(),
  summary: Type.String(),
  created_at: Nullable(Timestamp),
});

export const SceneBundle = Type.Object(
  {
    version: BundleVersion,
    scene: BundleScene,
    assets: Type.Array(BundleAsset, {
      description: 'Every asset the scene uses, in the order the scene lists them',
    }),
    shoot_days: Type.Array(BundleShootDay, { description: 'Every shoot day the scene is scheduled on' }),
    approvals: Type.Array(BundleApproval, {
      description:
        "Approvals whose subject is the scene or one of its assets, oldest first. For an engagement-bound key only those of the engagement's departments.",
    }),
    department_notes: Type.Array(BundleDepartmentNote, {
      description:
        "Department notes on the scene or one of its assets, oldest first. For an engagement-bound key only those of the engagement's departments.",
    }),
    etag: EtagField,
  },
  {
    $id: 'SceneBundle',
    title: 'Scene bundle',
    examples: [
      {
        version: 1,
        scene: {
          node_id: 3,
          number: '12',
          slugline: 'INT. WARD 9 - BED 7 - NIGHT',
          synopsis: 'MR HALDANE dies at three a.m. holding Mara’s hand.',
          status: 'done',
          revision_color: 'white',
          elements: { cast: ['Mara Quinn', 'Mr Haldane'], vfx: ['3 a.m. light shift'] },
          episode_id: 1,
          episode_code: '101',
        },
        assets: [
          {
            node_id: 14,
            label: 'Mara Quinn',
            kind: 'character',
            status: 'active',
            released_versions: [VERSION_EXAMPLE],
          },
        ],
        shoot_days: [{ id: 2, day_number: 2, date: '2026-10-06', status: 'shot', general_call: '18:00' }],
        approvals: [
          {
            id: 3,
            title: 'Bed 7 light shift, temp comp',
            status: 'pending',
            mode: 'decision',
            due: '2026-11-28',
          },
        ],
        department_notes: [
          {
            id: 4,
            summary: 'Light shift must be in camera where possible',
            created_at: '2026-10-02T09:00:00.000Z',
          },
        ],
        etag: '"Q2x9mX1cOeJ6m1r0bq8jv3cDqj0a2q2bkq9H1kq3vXo"',
      },
    ],
  },
);

export const Ingredient = Type.Object(
  {
    id: Type.Integer({ description: 'Id of the first occurrence (the lowest released version)' }),
    kind: Type.String(),
    label: Type.String(),
    relation: Type.Optional(Nullable(Type.String())),
    media_path: Type.Optional(
      Nullable(Type.String({ description: 'Served by GET /media/{path}?t=<ticket>' })),
    ),
    media_id: Type.Optional(MediaId),
  },
  { title: 'Ingredient' },
);

export const Costume = Type.Object({
  node_id: Type.Integer(),
  label: Type.String(),
  status: Type.String(),
  released_versions: Type.Array(VersionSummary, { description: 'Released versions only, oldest first' }),
  ingredients: Type.Array(Ingredient, {
    description:
      'De-duplicated union of the ingredients of every released version: one entry per distinct (kind, label, relation, media), in version then list order',
  }),
});

export const CharacterBundle = Type.Object(
  {
    version: BundleVersion,
    character: Type.Object({ node_id: Type.Integer(), label: Type.String(), status: Type.String() }),
    costumes: Type.Array(Costume, { description: 'Costumes the character wears, in the order listed' }),
    etag: EtagField,
  },
  {
    $id: 'CharacterBundle',
    title: 'Character bundle',
    examples: [
      {
        version: 1,
        character: { node_id: 14, label: 'Mara Quinn', status: 'active' },
        costumes: [
          {
            node_id: 20,
            label: 'Mara — duffle coat',
            status: 'active',
            released_versions: [{ ...VERSION_EXAMPLE, media_id: 7 }],
            ingredients: [
              {
                id: 3,
                kind: 'fabric',
                label: 'Navy melton wool',
                relation: 'primary',
                media_path: '/media/1f/1f0c2a52-8a51-4f57-9b8f-0d7d3c1e9a11.jpg',
                media_id: 8,
              },
              {
                id: 4,
                kind: 'trim',
                label: 'Horn toggles',
                relation: null,
                media_path: null,
                media_id: null,
              },
            ],
          },
        ],
        etag: '"7bszup8op3BCEIvqjufRO8UdvFlSPoNuNq6a3qYxHYk"',
      },
    ],
  },
);

export const BundleParams = Type.Object({
  node_id: Id('Graph node id'),
});

export const BundleHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description: 'One or more ETags (quoted, W/ weak forms accepted) or `*`; a match answers 304',
    }),
  ),
});

export type SceneBundle = Static<typeof SceneBundle>;
export type CharacterBundle = Static<typeof CharacterBundle>;
export type Ingredient = Static<typeof Ingredient>;

/** What one entry of the bundle list says about the grant that lets the key fetch it. */
const ExpiresAt = Nullable(
  Type.String({
    format: 'date-time',
    description:
      'When the grant that opens this bundle expires (UTC ISO-8601); null when it does not expire, and always null for a production-wide key (no grant involved). Of several live grants on one node, the latest expiry counts.',
  }),
);

const NodeId = Type.Integer({
  description: 'The node to fetch: GET /api/v1/bundles/{kind}/{node_id}',
});

export const SceneBundleEntry = Type.Object(
  {
    kind: Type.Literal('scene'),
    node_id: NodeId,
    number: Type.String({ description: 'Scene number as the script prints it' }),
    slugline: Type.String(),
    status: Type.String({ description: 'planned, active, blocked, done, or omitted by a script revision' }),
    episode_id: Type.Optional(Type.Integer({ description: 'Only on an episodic production' })),
    episode_code: Type.Optional(Type.String({ description: 'Only on an episodic production' })),
    expires_at: ExpiresAt,
  },
  { $id: 'SceneBundleEntry', title: 'Scene bundle entry' },
);

export const CharacterBundleEntry = Type.Object(
  {
    kind: Type.Literal('character'),
    node_id: NodeId,
    label: Type.String({ description: "The character's name" }),
    status: Type.String(),
    expires_at: ExpiresAt,
  },
  { $id: 'CharacterBundleEntry', title: 'Character bundle entry' },
);

export const BundleEntry = Type.Union([SceneBundleEntry, CharacterBundleEntry], {
  $id: 'BundleEntry',
  title: 'Bundle entry',
  description: 'A bundle this key may fetch: `kind` says which route (scene or character) serves it',
  examples: [
    {
      kind: 'scene',
      node_id: 3,
      number: '12',
      slugline: 'INT. WARD 9 - BED 7 - NIGHT',
      status: 'active',
      expires_at: '2026-12-31T23:59:59.000Z',
    },
  ],
});

export const BundleListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Page size: at most this many entries, the next page named by the Link header. Without it the whole list is answered. Above ${MAX_PAGE} is clamped to ${MAX_PAGE}; below 1 or not a whole number is 422.`,
    }),
  ),
  cursor: Type.Optional(CursorParam),
});

export type BundleEntry = Static<typeof BundleEntry>;
export type BundleListQuery = Static<typeof BundleListQuery>;
