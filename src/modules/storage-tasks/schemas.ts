import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';

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
