import { Type, type Static } from 'typebox';
import { Id, Nullable, Timestamp } from '../../domain/schema-kit.js';

export const MediaDetail = Type.Object(
  {
    id: Type.Integer(),
    kind: Type.String({ description: 'image, video, audio, document or file, from the bytes' }),
    label: Type.String(),
    node_id: Type.Optional(Nullable(Type.Integer({ description: 'The asset the media belongs to' }))),
    delivery_id: Type.Optional(Nullable(Type.Integer())),
    work_item_id: Type.Optional(
      Nullable(Type.Integer({ description: 'Set only for media submitted on a turnover' })),
    ),
    created_by: Type.Optional(Nullable(Type.String())),
    created_at: Type.Optional(Nullable(Timestamp)),
    updated_at: Type.Optional(Timestamp),
    content_type: Type.Optional(Type.String({ description: 'Media type sniffed from the bytes' })),
    size: Type.Optional(Type.Integer({ minimum: 0, description: 'Bytes' })),
    sha256: Type.Optional(Type.String({ description: 'Hex SHA-256 of the bytes; also the content ETag' })),
  },
  {
    $id: 'MediaDetail',
    title: 'Media detail',
    examples: [
      {
        id: 13,
        kind: 'image',
        label: 'scrubs-v1.jpg',
        node_id: 21,
        delivery_id: null,
        work_item_id: null,
        created_by: null,
        created_at: '2026-09-30T10:30:00.000Z',
        updated_at: '2026-11-23T19:02:11.483Z',
        content_type: 'image/jpeg',
        size: 48213,
        sha256: '9c1185a5c5e9fc54612808977ee8f548b2258d31f2b6c9a1f0a4e1d0b3c2a1f0',
      },
    ],
  },
);

export const MediaParams = Type.Object({
  id: Id('Media id'),
});

export type MediaDetail = Static<typeof MediaDetail>;
