import { Type, type Static } from 'typebox';
import { CHANGE_KINDS } from '../../db/change-log.js';
import { StringEnum, Timestamp } from '../../domain/schema-kit.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export const ChangesQuery = Type.Object({
  after: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'Answer the changes after this one: a `cursor` or `next_cursor` from an earlier answer (opaque; valid for good, across restarts). `now` starts at the newest change (an empty page whose `next_cursor` is the head). Omitted: from the first change the production logged. Anything else is 422.',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: DEFAULT_LIMIT,
      description: `At most this many changes: default ${DEFAULT_LIMIT}; above ${MAX_LIMIT} is clamped to ${MAX_LIMIT}; below 1 is 422`,
    }),
  ),
  wait: Type.Optional(
    Type.Integer({
      minimum: 0,
      default: 0,
      description: `Long-poll: when there is no change after \`after\`, hold the request up to this many seconds and answer as soon as one commits: on PostgreSQL within milliseconds whichever process committed it (the database announces every commit); on SQLite at once for this server's own writes, within \`PRODGRAPH_CHANGE_POLL_MS\` (250 ms unless the operator set it) for another process's. Default 0 (answer at once); above the server's maximum (30 unless its operator set \`PRODGRAPH_FEED_MAX_WAIT_SECONDS\`) is clamped to it.`,
    }),
  ),
});
export type ChangesQuery = Static<typeof ChangesQuery>;

export const Change = Type.Object(
  {
    cursor: Type.String({ description: 'Pass as `after` to read on from this change' }),
    at: Timestamp,
    kind: StringEnum(CHANGE_KINDS, {
      description:
        'The kind of object (more kinds may be added): asset, scene, version, note, approval, delivery, person, media, … Its id is the id the API shows it under (`node_id` for assets and scenes).',
    }),
    id: Type.Integer({ description: 'The object’s id' }),
    op: StringEnum(['created', 'updated', 'retired'] as const, {
      description: '`retired` also stands for deleted: either way a mirror drops the object',
    }),
    actor: Type.Union([Type.String(), Type.Null()], {
      description:
        'Who made the change, as the activity feed names them: a person, the label of the API key, or the CLI user ("… via prodgraph CLI", "prodgraph import"). Never contact details.',
    }),
  },
  { $id: 'Change', title: 'Change' },
);
export type Change = Static<typeof Change>;

export const ChangePage = Type.Object(
  {
    changes: Type.Array(Change, { description: 'In commit order, oldest first' }),
    next_cursor: Type.String({
      description:
        'Pass as `after` next time: the last change’s cursor, or the cursor you sent when there was none',
    }),
    more: Type.Boolean({ description: 'true when more changes are waiting: ask again at once' }),
  },
  { $id: 'ChangePage', title: 'Change page' },
);
export type ChangePage = Static<typeof ChangePage>;
