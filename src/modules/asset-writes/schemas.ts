import { Type, type Static } from 'typebox';
import { NODE_STATUSES } from '../../domain/vocabulary.js';
import { checkedWhereRead, Id, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';

export const AssetParams = Type.Object({
  node_id: Id('Graph node id of an asset (never a scene)'),
});

export const NewAsset = Type.Object(
  {
    label: Type.String({ minLength: 1, maxLength: 300, description: 'Required; must not be blank' }),
    kind: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 60,
        default: 'asset',
        description:
          'Open set (asset, character, costume, location, prop, vehicle, set, …); default `asset`. ' +
          '`scene` is refused with 422: scenes come from the script.',
      }),
    ),
    department: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'Slug of a department of this production; omitted or null leaves the asset unassigned',
        }),
      ),
    ),
    status: Type.Optional(
      StringEnum(NODE_STATUSES, { default: 'planned', description: 'Default `planned`' }),
    ),
  },
  {
    $id: 'NewAsset',
    title: 'New asset',
    additionalProperties: false,
    description: 'Unknown fields are refused (422) so a misspelt field never passes silently.',
  },
);
export type NewAsset = Static<typeof NewAsset>;

export const CreatedAsset = Type.Object(
  {
    node_id: Type.Integer(),
    label: Type.String(),
    kind: Type.String(),
    status: StringEnum(NODE_STATUSES),
    department: Nullable(Type.String({ description: 'Department slug, null when unassigned' })),
    versions: Type.Integer({ minimum: 0, description: 'Always 0 for a new asset' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'CreatedAsset',
    title: 'Created asset',
    description:
      'The asset list row of the new node (plus created_at); its full record is at the Location header.',
  },
);
export type CreatedAsset = Static<typeof CreatedAsset>;

export const NewNote = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 10_000, description: 'Required; must not be blank' }),
    author: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 200,
          description:
            "Free text (a person's name, a tool). Omitted, null or blank: the calling key's person when bound to one, else the key's label.",
        }),
      ),
    ),
    version_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description:
          'The version of this asset the note is about (released or not; additive). Omitted: the newest version, or the activity feed when the asset has none. Not a version of this asset: 422.',
      }),
    ),
  },
  { $id: 'NewNote', title: 'New note', additionalProperties: false },
);
export type NewNote = Static<typeof NewNote>;

export const CreatedNote = Type.Object(
  {
    id: Type.Integer({
      description: 'Id of the version note, or of the activity entry when the asset has no version',
    }),
    node_id: Type.Integer(),
    landed_on: StringEnum(['version', 'activity'] as const, {
      description:
        '`version`: attached to the version `version_id` named, else the newest; `activity`: the asset has no version yet',
    }),
    version_id: Nullable(Type.Integer()),
    version: Nullable(Type.Integer({ description: 'Number of the version the note landed on' })),
    text: Type.String(),
    author: Type.String(),
    created_at: Timestamp,
  },
  { $id: 'CreatedNote', title: 'Created note' },
);
export type CreatedNote = Static<typeof CreatedNote>;

export const VERSION_FIELDS = ['note', 'variant'] as const;

/**
 * The multipart body, as the document states it (`file` required). The route streams the parts
 * itself and checks each as it reads it (stream mode leaves no parsed body, so the validator
 * sees an empty stand-in): the schema is checked where it is read, not by the validator.
 */
export const NewVersionForm = checkedWhereRead(
  Type.Object(
    {
      file: Type.Unsafe<unknown>({
        type: 'string',
        format: 'binary',
        description:
          'Exactly one. Streamed to the media store; its content type is sniffed from the bytes, never taken from the request, and must be an image or a video (415 otherwise; an empty file is 422). Larger than the configured upload limit (PRODGRAPH_MAX_UPLOAD_BYTES): 413.',
      }),
      note: Type.Optional(Type.String({ maxLength: 10_000, description: 'Optional version note' })),
      variant: Type.Optional(Type.String({ maxLength: 100, description: 'Optional; default `On-Set`' })),
    },
    { title: 'New version (multipart/form-data)', additionalProperties: false },
  ),
);

export const CreatedVersion = Type.Object(
  {
    id: Type.Integer(),
    node_id: Type.Integer(),
    version: Type.Integer({ description: 'Next number for the asset, from 1' }),
    variant: Type.String(),
    status: Type.String({ description: 'Always `wip` for a landed version' }),
    released: Type.Boolean({ description: 'Always false: released by a final approval' }),
    locked: Type.Boolean({
      description: 'True: unreleased, so the full asset record shows it as a locked stub and bundles omit it',
    }),
    note: Nullable(Type.String()),
    media_id: Type.Integer({
      description:
        'The stored file, for GET /media/{id}/content (additive): the uploader can fetch what it landed before the version is released',
    }),
    media_path: Nullable(
      Type.String({
        description: 'The stored file on the off-plane file route (`{base_url}{media_path}?t={ticket}`)',
      }),
    ),
    content_type: Type.String({
      description: 'Sniffed from the bytes; application/octet-stream when unknown',
    }),
    size: Type.Integer({ description: 'Bytes stored' }),
    sha256: Type.String({ description: 'Hex SHA-256 of the stored bytes, for the client to verify' }),
    created_by: Type.String(),
    created_by_person_id: Nullable(Type.Integer()),
    created_at: Timestamp,
  },
  { $id: 'CreatedVersion', title: 'Landed version' },
);
export type CreatedVersion = Static<typeof CreatedVersion>;
