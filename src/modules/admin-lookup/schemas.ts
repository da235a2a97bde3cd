import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../domain/schema-kit.js';

/*
 * What an administrator picks from when engaging a vendor or granting it something: the
 * organisations, and the scenes, characters and deliveries found by number or name. Needs only
 * the `admin` scope, so an administrator's key does not also need `read` to manage vendors.
 */

export const Organisation = Type.Object(
  {
    id: Type.Integer(),
    ref: Nullable(Type.String()),
    name: Type.String(),
    engagements: Type.Integer({ minimum: 0, description: 'Live (not archived) engagements of it' }),
  },
  { $id: 'AdminOrganisation', title: 'Organisation' },
);
export type Organisation = Static<typeof Organisation>;

export const TARGET_KINDS = ['scene', 'character', 'delivery'] as const;

export const GrantTargetQuery = Type.Object(
  {
    kind: StringEnum(TARGET_KINDS, { description: 'What the grant will name' }),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'A scene number (its start) or words of a slugline, a character’s name, a delivery’s title; case-insensitive. Absent or empty: the first ones in order',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 50,
        default: 20,
        description: 'At most this many (default 20, at most 50)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type GrantTargetQuery = Static<typeof GrantTargetQuery>;

export const GrantTarget = Type.Object(
  {
    kind: StringEnum(TARGET_KINDS),
    id: Type.Integer({ description: '`node_id` of a scene or character, `delivery_id` of a delivery' }),
    label: Type.String({ description: 'The slugline, the character’s name or the delivery’s title' }),
    number: Nullable(Type.String({ description: 'The scene number' })),
    episode_code: Nullable(Type.String({ description: 'The scene’s episode, on an episodic production' })),
    status: Type.String(),
  },
  { $id: 'AdminGrantTarget', title: 'Grant target' },
);
export type GrantTarget = Static<typeof GrantTarget>;
