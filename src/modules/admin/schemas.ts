import { Type, type Static } from 'typebox';
import { GRANT_ACCESS, GRANT_KINDS, SCOPES } from '../../domain/vocabulary.js';
import { Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';

/*
 * The admin surface: a production's vendor engagements, their grants and its API keys, for
 * automation and a future console. Ids are the API's; refs are the production document's.
 */

const Id = (description: string) => Type.Integer({ minimum: 1, maximum: 2_147_483_647, description });

export const IdParams = Type.Object({ id: Id('The object id') });

const Ref = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
  description:
    'The document handle (letters, digits, `.`, `_`, `:`, `-`); unique across the whole production, as in the production document',
});

export const Engagement = Type.Object(
  {
    id: Type.Integer(),
    ref: Nullable(Type.String()),
    organisation: Type.Object({ id: Type.Integer(), ref: Nullable(Type.String()), name: Type.String() }),
    departments: Type.Array(Type.String(), {
      description: 'Slugs of the departments the engagement works for',
    }),
    source: StringEnum(['document', 'admin'] as const, {
      description:
        '`document`: from the production document (a sync may change it); `admin`: made here or with the CLI',
    }),
    live_grants: Type.Integer({ minimum: 0 }),
    keys: Type.Integer({ minimum: 0, description: 'Unrevoked keys bound to the engagement' }),
    created_at: Timestamp,
    archived_at: Nullable(Timestamp),
  },
  { $id: 'AdminEngagement', title: 'Engagement' },
);
export type Engagement = Static<typeof Engagement>;

export const EngagementQuery = Type.Object(
  {
    include_archived: Type.Optional(
      StringEnum(['1', 'true', '0', 'false'] as const, {
        description: '`1`/`true`: also list archived engagements; `0`/`false` or absent: live ones only',
      }),
    ),
  },
  { additionalProperties: false },
);

export const NewEngagement = Type.Object(
  {
    ref: Ref,
    organisation_id: Id('The vendor organisation'),
    departments: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 100,
        description: 'Department slugs; they narrow the approvals, notes and cost lines the vendor sees',
      }),
    ),
  },
  { $id: 'NewEngagement', title: 'New engagement', additionalProperties: false },
);
export type NewEngagement = Static<typeof NewEngagement>;

export const Grant = Type.Object(
  {
    id: Type.Integer(),
    engagement_id: Type.Integer(),
    engagement_ref: Nullable(Type.String()),
    kind: StringEnum(GRANT_KINDS),
    node_id: Nullable(Type.Integer({ description: 'Scene or character grants' })),
    node_label: Nullable(Type.String()),
    episode_code: Nullable(
      Type.String({
        description: "A scene grant's episode on an episodic production (its code); null otherwise",
      }),
    ),
    delivery_id: Nullable(Type.Integer({ description: 'Delivery grants' })),
    delivery_title: Nullable(Type.String()),
    access: Nullable(StringEnum(GRANT_ACCESS)),
    expires_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
    live: Type.Boolean({ description: 'Not revoked, not expired, and its target not retired' }),
    source: StringEnum(['document', 'admin'] as const),
    created_at: Timestamp,
  },
  { $id: 'AdminGrant', title: 'Grant' },
);
export type Grant = Static<typeof Grant>;

export const GrantQuery = Type.Object(
  {
    engagement_id: Type.Optional(Id('Only this engagement’s grants')),
    include_inactive: Type.Optional(
      StringEnum(['1', 'true', '0', 'false'] as const, {
        description:
          '`1`/`true`: also list revoked, expired and retired-target grants; absent: live ones only',
      }),
    ),
  },
  { additionalProperties: false },
);

export const NewGrant = Type.Object(
  {
    engagement_id: Id('The engagement the grant is for (not archived)'),
    kind: StringEnum(GRANT_KINDS),
    node_id: Type.Optional(Id('Required for `scene` (a scene) and `character` (a character) grants')),
    delivery_id: Type.Optional(Id('Required for `delivery` grants')),
    access: Type.Optional(StringEnum(GRANT_ACCESS, { description: 'Required for `delivery` grants' })),
    expires_at: Type.Optional(
      Nullable(
        Type.String({
          format: 'date-time',
          description: 'When the grant stops counting (UTC ISO-8601, in the future)',
        }),
      ),
    ),
  },
  { $id: 'NewGrant', title: 'New grant', additionalProperties: false },
);
export type NewGrant = Static<typeof NewGrant>;

export const ApiKey = Type.Object(
  {
    id: Type.Integer(),
    prefix: Type.String({
      description: 'The recognisable start of the token; the token itself is never kept',
    }),
    label: Type.String(),
    scopes: Type.Array(StringEnum(SCOPES)),
    engagement_id: Nullable(Type.Integer()),
    engagement_ref: Nullable(Type.String()),
    person_id: Nullable(Type.Integer()),
    person_name: Nullable(Type.String()),
    created_at: Timestamp,
    last_used_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When the key was last used, to the minute (recorded at most once a minute per key)',
      }),
    ),
    revoked_at: Nullable(Timestamp),
    expires_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When the key stops working (refused with 401 `key_expired` from then on); null: never',
      }),
    ),
  },
  { $id: 'AdminKey', title: 'API key' },
);
export type ApiKey = Static<typeof ApiKey>;

export const KeyQuery = Type.Object(
  {
    engagement_id: Type.Optional(
      Id(
        'Only the keys bound to this engagement (an unknown one, or one of another production: an empty list)',
      ),
    ),
  },
  { additionalProperties: false },
);

export const NewKey = Type.Object(
  {
    label: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Who or what the key is for; must not be blank',
    }),
    scopes: Type.Optional(
      Type.Array(StringEnum(SCOPES), {
        minItems: 1,
        maxItems: SCOPES.length,
        uniqueItems: true,
        description:
          'Default `read` + `write` (`read` alone for an engagement-bound key). `admin` only on a production-wide key. `metrics` is refused here (422): it reads the whole server, so only its operator mints it, with the CLI.',
      }),
    ),
    engagement_id: Type.Optional(Nullable(Id('Binds the key to this (live) engagement: a vendor key'))),
    person_id: Type.Optional(
      Nullable(
        Id(
          'Writes are recorded under this person. Minted by a person signed in to the console: that person only (another is 422), or omitted for a key bound to no one',
        ),
      ),
    ),
    expires_at: Type.Optional(
      Nullable(
        Type.String({
          format: 'date-time',
          description:
            "When the key stops working (UTC ISO-8601, in the future): from then on it is refused with 401 `key_expired`. Absent: never, or for an engagement-bound key the server's default vendor key lifetime when one is set (`PRODGRAPH_VENDOR_KEY_DAYS`); null: never, whatever the default.",
        }),
      ),
    ),
  },
  { $id: 'NewKey', title: 'New API key', additionalProperties: false },
);
export type NewKey = Static<typeof NewKey>;

export const MintedKey = Type.Object(
  {
    ...ApiKey.properties,
    token: Nullable(
      Type.String({
        description:
          'The whole token, shown this once. It is never stored: an Idempotency-Key replay answers null here.',
      }),
    ),
  },
  { $id: 'AdminMintedKey', title: 'Minted API key' },
);
export type MintedKey = Static<typeof MintedKey>;
