import { Type, type Static } from 'typebox';
import { CursorParam } from '../../http/paging.js';
import { MAX_PAGE } from '../../domain/page.js';
import { Nullable } from '../../http/schemas.js';

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
