import { Type, type Static } from 'typebox';
import type { PagedList } from '../../domain/page.js';
import { CursorParam } from '../../domain/schema-kit.js';
import { Nullable, Timestamp } from '../../domain/schema-kit.js';

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

/** The query of a newest-first feed (/activity, /jobs): it always pages, `limit` entries at a time. */
export const FeedQuery = (what: string, changed: string) =>
  Type.Object({
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: DEFAULT_LIMIT,
        description: `How many ${what}, newest first: default ${DEFAULT_LIMIT}; above ${MAX_LIMIT} is clamped to ${MAX_LIMIT}; below 1 or not an integer is 422. When more follow, the Link header names the next (older) page.`,
      }),
    ),
    cursor: Type.Optional(CursorParam),
    before: Type.Optional(
      Type.String({
        format: 'date-time',
        description: `ISO-8601 date-time with a zone: only ${what} older than it (reaches back past the newest ${MAX_LIMIT})`,
      }),
    ),
    updated_since: Type.Optional(
      Type.String({
        format: 'date-time',
        description: `ISO-8601 date-time with a zone: only ${what} ${changed} after it`,
      }),
    ),
  });

/** Newest first: pages of (time, id) descending; the default page is the contract's 50. */
export const feedList = (name: string): PagedList => ({ name, key: ['text', 'int'], maxLimit: MAX_LIMIT });

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
  {
    $id: 'ActivityEntry',
    title: 'Activity entry',
    examples: [
      {
        id: 9,
        at: '2026-11-20T10:05:00.000Z',
        actor: 'Ana Ruiz',
        verb: 'requested changes',
        summary: 'Sister Agnes uniform v2: wrong cap',
        node: { node_id: 22, label: 'Sister Agnes — 1974 uniform', kind: 'costume' },
      },
    ],
  },
);
export type ActivityEntry = Static<typeof ActivityEntry>;
