import { Type, type Static } from 'typebox';
import { STORAGE_EVENT_TYPES, STORAGE_SOURCES } from '../../domain/vocabulary.js';
import { checkedWhereRead, Nullable, StringEnum } from '../../domain/schema-kit.js';
import { Filespace } from '../storage-library/schemas.js';
import { MAX_DEDUPE_KEY } from './validation.js';

/** One storage event as an agent sends it (the contract's fields, and the optional `to_path` and `size`). */
export const StorageEvent = Type.Object(
  {
    event_type: StringEnum(STORAGE_EVENT_TYPES, {
      description: 'What happened to the file; a `move` also carries `to_path`',
    }),
    path: Type.String({
      minLength: 1,
      description:
        'Relative to the filespace root: forward or back slashes; no leading `/`, no drive letter, no `..`, no control character; stored normalised (at most 4,096 characters)',
    }),
    to_path: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Where a `move` went (required on a move, refused on any other type); the same rules as `path`',
      }),
    ),
    source: StringEnum(STORAGE_SOURCES, { description: 'How the agent saw it' }),
    dedupe_key: Type.String({
      minLength: 1,
      maxLength: MAX_DEDUPE_KEY,
      description:
        'The agent’s own key for this event, unique per production: a replay counts under `duplicates` and changes nothing',
    }),
    detected_at: Type.String({
      format: 'date-time',
      description: 'When the agent saw it: ISO-8601 with a zone (stored in UTC)',
    }),
    size: Type.Optional(
      Nullable(Type.Integer({ minimum: 0, description: 'The file size in bytes, when the agent knows it' })),
    ),
  },
  {
    $id: 'StorageEvent',
    title: 'Storage event',
    examples: [
      {
        event_type: 'create',
        path: 'plates/sh010/sh010_v001.exr',
        source: 'audit_tail',
        dedupe_key: 'audit-7f3a-000128',
        detected_at: '2026-03-01T11:00:00Z',
        size: 48213,
      },
    ],
  },
);

export const StorageEventsBody = Type.Object(
  {
    filespace: Filespace,
    events: Type.Array(
      // typed for clients; the route checks each event on its own, so a bad one is refused alone
      Type.Unsafe<unknown>(checkedWhereRead(StorageEvent)),
      {
        description:
          'Applied in order, in one transaction. Each event is checked on its own: one that breaks the event schema is listed in `refused` (naming the field) and never sinks the rest. More events than the configured batch limit (PRODGRAPH_MAX_EVENT_BATCH, default 10,000) answers 413 and applies nothing.',
      },
    ),
  },
  { $id: 'StorageEventsRequest', title: 'Storage event batch', additionalProperties: false },
);
export type StorageEventsBody = Static<typeof StorageEventsBody>;

export const RefusedEvent = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'Position of the event in `events`' }),
    dedupe_key: Nullable(Type.String({ description: 'As sent; null when the event had none' })),
    reason: Type.String({ description: 'What is wrong, naming the field' }),
  },
  { $id: 'RefusedStorageEvent', title: 'Refused storage event' },
);

export const StorageEventsResult = Type.Object(
  {
    accepted: Type.Integer({
      minimum: 0,
      description: 'Events recorded and applied to the library by this call',
    }),
    duplicates: Type.Integer({
      minimum: 0,
      description:
        'Valid events whose dedupe_key was already recorded (by an earlier or concurrent call, or earlier in this batch); nothing was changed for them',
    }),
    refused: Type.Array(RefusedEvent, { description: 'Events refused one by one; the others were applied' }),
  },
  { $id: 'StorageEventsResult', title: 'Storage event batch result' },
);
export type StorageEventsResult = Static<typeof StorageEventsResult>;
