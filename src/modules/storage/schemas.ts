import { Type, type Static } from 'typebox';
import { STORAGE_EVENT_TYPES, STORAGE_SOURCES } from '../../domain/vocabulary.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

const Filespace = Type.String({
  description:
    "Name of the filespace install the agent runs against; must be the production's active install (403 otherwise)",
});

export const StorageEventsBody = Type.Object(
  {
    filespace: Filespace,
    events: Type.Array(
      Type.Unknown({
        description: [
          'A storage event: `{event_type, path, to_path?, source, dedupe_key, detected_at, size?}`.',
          `event_type is one of ${STORAGE_EVENT_TYPES.join(', ')} (a move also carries \`to_path\`, which no other type may carry);`,
          `source is one of ${STORAGE_SOURCES.join(', ')};`,
          'path and to_path are relative to the filespace root (forward or back slashes; no leading `/`, no drive letter, no `..`, no NUL) and are stored normalised;',
          'dedupe_key is the agent’s own non-empty key (at most 512 characters), unique per production: a replay counts under `duplicates`;',
          'detected_at is an ISO-8601 timestamp with a zone; size (optional) is the file size in bytes.',
          'Each event is checked on its own: a bad one is listed in `refused` and never sinks the rest.',
        ].join(' '),
      }),
      {
        description:
          'Applied in order, in one transaction. More events than the configured batch limit (PRODGRAPH_MAX_EVENT_BATCH, default 10,000) answers 413 and applies nothing.',
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
