import { Type, type Static } from 'typebox';
import { NODE_STATUSES } from '../../domain/vocabulary.js';
import { pageQuery } from '../../domain/schema-kit.js';
import { Id, MediaId, Nullable, RetiredAt, StringEnum, Timestamp } from '../../domain/schema-kit.js';
import { SceneRef } from '../scenes/schemas.js';
import { VersionSummary } from '../versions/schemas.js';

const MediaPath = Nullable(
  Type.String({ description: 'Served by GET /media/{path}?t=<ticket> (see GET /media-ticket)' }),
);

const rowFields = {
  node_id: Type.Integer({ description: 'Graph node id' }),
  label: Type.String(),
  kind: Type.String({
    description: 'Open set other than `scene`: asset, character, costume, location, prop, …',
  }),
  status: StringEnum(NODE_STATUSES),
  department: Nullable(Type.String({ description: 'Department slug; null for a node no department owns' })),
};

export const AssetRow = Type.Object(
  {
    ...rowFields,
    versions: Type.Integer({ minimum: 0, description: 'Number of versions, released or not' }),
    updated_at: Timestamp,
    retired_at: Type.Optional(RetiredAt),
  },
  {
    $id: 'AssetRow',
    title: 'Asset (list row)',
    description: 'Rows never carry media.',
    examples: [
      {
        node_id: 14,
        label: 'Mara Quinn',
        kind: 'character',
        status: 'active',
        department: 'costume',
        versions: 2,
        updated_at: '2026-11-23T19:02:11.483Z',
      },
    ],
  },
);
export type AssetRow = Static<typeof AssetRow>;

// Same fields without the $id: one schema document may not hold one $id twice.
const LinkedAsset = Type.Object(AssetRow.properties, { title: 'Asset (list row)' });

export const AssetListQuery = Type.Object({
  department: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Department slug; an unknown slug is 422' }),
  ),
  kind: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Exact kind (open set); `scene` is refused with 422 (scenes are on GET /scenes)',
    }),
  ),
  status: Type.Optional(StringEnum(NODE_STATUSES, { description: 'Only assets in this status' })),
  released: Type.Optional(
    StringEnum(['1', 'true', '0', 'false'] as const, {
      description: '`1`/`true`: only nodes with at least one released version; `0`/`false` or absent: all',
    }),
  ),
  ...pageQuery('asset rows'),
});

export const AssetParams = Type.Object({ node_id: Id('Graph node id') });

export const VersionNote = Type.Object(
  {
    id: Type.Integer(),
    text: Type.String(),
    author: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { $id: 'VersionNote', title: 'Version note' },
);

export const AssetIngredient = Type.Object(
  {
    id: Type.Integer(),
    kind: Type.String({ description: 'Open set: fabric, reference, texture, …' }),
    label: Type.String(),
    relation: Nullable(Type.String()),
    media_path: MediaPath,
    media_id: MediaId,
  },
  { $id: 'AssetIngredient', title: 'Ingredient', description: 'What a look is made of' },
);

export const ReleasedVersion = Type.Object(
  {
    ...VersionSummary.properties,
    released: Type.Literal(true),
    locked: Type.Literal(false),
    notes: Type.Array(VersionNote, { description: 'Notes on this version, oldest first' }),
    ingredients: Type.Array(AssetIngredient, { description: 'In the order the look lists them' }),
  },
  {
    $id: 'ReleasedVersion',
    title: 'Released version',
    description: 'The full version summary with its media, notes and ingredients',
  },
);

export const LockedVersion = Type.Object(
  {
    id: Type.Integer(),
    version: Type.Integer(),
    variant: Type.String(),
    status: Type.String({ description: 'Open set: wip, review, approved, rejected, …' }),
    released: Type.Literal(false),
    locked: Type.Literal(true),
    // the same fields as VersionNote; one schema may carry its $id only once in an answer
    notes: Type.Array(Type.Object(VersionNote.properties), {
      description:
        'Notes landed on this version, oldest first (a note sent while it is the newest version, or aimed at it with `version_id`): readable before release',
    }),
  },
  {
    $id: 'LockedVersion',
    title: 'Locked version stub',
    description:
      'A version not yet released: its notes, but no media, upload note or ingredients until it is released',
  },
);

export const AssetRecord = Type.Object(
  {
    ...rowFields,
    versions: Type.Array(Type.Union([ReleasedVersion, LockedVersion]), {
      description:
        'Every version, oldest first. Released ones in full (`locked: false`), the others as locked stubs. ' +
        '(On the list row `versions` is the count; here it is the list.)',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    scenes: Type.Array(SceneRef, { description: 'Scenes that use this asset, in script order' }),
    costumes: Type.Optional(
      Type.Array(LinkedAsset, { description: 'Characters only: the costumes the character wears' }),
    ),
    worn_by: Type.Optional(
      Type.Array(LinkedAsset, { description: 'Costumes only: the characters who wear it' }),
    ),
  },
  { $id: 'AssetRecord', title: 'Asset (full record)' },
);
export type AssetRecord = Static<typeof AssetRecord>;
export type AssetVersion = AssetRecord['versions'][number];
