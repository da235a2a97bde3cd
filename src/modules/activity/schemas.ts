import { Type, type Static } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.js';

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

export const LimitQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: DEFAULT_LIMIT,
      description: `How many entries, newest first: default ${DEFAULT_LIMIT}; above ${MAX_LIMIT} is clamped to ${MAX_LIMIT}; below 1 or not an integer is 422`,
    }),
  ),
});

/** decisions.md: above the maximum is clamped, never refused. */
export const clampLimit = (limit: number | undefined): number => Math.min(limit ?? DEFAULT_LIMIT, MAX_LIMIT);

export const ActivityEntry = Type.Object(
  {
    id: Type.Integer(),
    at: Timestamp,
    actor: Type.String({ description: 'Who did it: a person, or the label of the API key that wrote it' }),
    verb: Type.String({ description: 'Open set: released, approved, noted, landed version, sent, …' }),
    summary: Type.String(),
    node: Nullable(
      Type.Object(
        { node_id: Type.Integer(), label: Type.String(), kind: Type.String() },
        { description: 'The graph node it concerns (scene or asset)' },
      ),
    ),
  },
  { $id: 'ActivityEntry', title: 'Activity entry' },
);
export type ActivityEntry = Static<typeof ActivityEntry>;
