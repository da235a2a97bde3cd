import { Type, type Static } from 'typebox';
import { STORAGE_EVENT_TYPES, STORAGE_SOURCES } from '../../domain/vocabulary.js';
import { checkedWhereRead, Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { MAX_DEDUPE_KEY } from './event-validation.js';

const Filespace = Type.String({
  description:
    "Name of the filespace install the agent runs against; must be the production's active install (403 otherwise)",
});

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

export const MediaProxyJson = Type.Object(
  {
    filespace: Filespace,
    path: Type.String({
      description: 'Library path of the file the image stands in for (a live library row)',
    }),
    bytes: Type.String({
      contentEncoding: 'base64',
      description: 'The JPEG, base64 (standard alphabet; line breaks allowed). At most 8 MiB once decoded.',
    }),
  },
  { $id: 'MediaProxyJson', title: 'Media proxy (JSON form)', additionalProperties: false },
);
export type MediaProxyJson = Static<typeof MediaProxyJson>;

/** The same request as a form: the route reads the parts as they stream (checked where read). */
export const MediaProxyForm = checkedWhereRead(
  Type.Object(
    {
      filespace: Filespace,
      path: MediaProxyJson.properties.path,
      file: Type.Unsafe<unknown>({
        type: 'string',
        format: 'binary',
        description: 'The JPEG itself, at most 8 MiB (read up to the limit and no further)',
      }),
    },
    { title: 'Media proxy (multipart form)', additionalProperties: false },
  ),
);

export const MediaProxyResult = Type.Object(
  {
    ok: Type.Boolean(),
    media_path: Type.String({
      description: 'Where the stored proxy is served: the off-plane file route `/media/{path}?t=<ticket>`',
    }),
    bytes: Type.Integer({ description: 'Size in bytes of the stored (re-encoded) JPEG' }),
  },
  { $id: 'MediaProxyResult', title: 'Media proxy result' },
);
export type MediaProxyResult = Static<typeof MediaProxyResult>;

export const TASK_STATUSES = ['pending', 'done', 'failed'] as const;

export const StorageTask = Type.Object(
  {
    id: Type.Integer(),
    op: StringEnum(['move'] as const, { description: 'Only moves are queued today' }),
    from_path: Type.String({ description: 'Library path to move from' }),
    to_path: Type.String({ description: 'Library path to move to' }),
    approved_by: Type.String({ description: 'The admin who approved the move' }),
    approved_at: Timestamp,
    status: StringEnum(TASK_STATUSES, {
      description: '`pending` until acknowledged, then `done` or `failed`',
    }),
    note: Nullable(Type.String({ description: "The agent's note from the acknowledgement" })),
    settled_at: Nullable(Timestamp),
  },
  { $id: 'StorageTask', title: 'Storage task' },
);
export type StorageTask = Static<typeof StorageTask>;

export const TaskAckBody = Type.Object(
  {
    task_id: Id('id from GET /storage/tasks'),
    ok: Type.Boolean({
      description: 'true: the agent made the move (`done`); false: it could not (`failed`)',
    }),
    note: Type.Optional(
      Type.String({ maxLength: 2000, description: 'Why it failed, or anything worth keeping' }),
    ),
  },
  { $id: 'StorageTaskAck', title: 'Storage task acknowledgement', additionalProperties: false },
);
export type TaskAckBody = Static<typeof TaskAckBody>;

export const TaskAckResult = Type.Object(
  {
    ok: Type.Boolean({ description: 'Always true on 200, re-acks included' }),
    already_settled: Type.Boolean({
      description: 'true when the task had been settled before this call; nothing was changed',
    }),
    task: StorageTask,
  },
  { $id: 'StorageTaskAckResult', title: 'Storage task acknowledgement result' },
);
export type TaskAckResult = Static<typeof TaskAckResult>;
