import { Type, type Static } from 'typebox';
import { MediaId, Nullable } from '../../domain/schema-kit.js';

/** A released version as the reference shows it (the bundles' examples hold it too). */
export const VERSION_EXAMPLE = {
  id: 1,
  version: 1,
  variant: 'Main',
  status: 'approved',
  released: true,
  note: 'First look, approved at camera test.',
  media_path: '/media/86/86b006ee-a192-4216-b3e3-b6df0b5dd3d9.jpg',
  media_id: 1,
  created_by: 'Ana Ruiz',
  created_by_person_id: 8,
  archived: false,
  created_at: '2026-10-01T10:00:00.000Z',
  updated_at: '2026-11-23T19:02:11.483Z',
};

/** The asset version summary: a released version as bundles and asset records show it. */
export const VersionSummary = Type.Object(
  {
    id: Type.Integer(),
    version: Type.Integer({ description: 'Numbered per asset from 1' }),
    variant: Type.String(),
    status: Type.String({ description: 'Open set: wip, review, approved, rejected, …' }),
    released: Type.Literal(true, { description: 'Always true: only released versions are summarised' }),
    note: Type.Optional(Nullable(Type.String())),
    media_path: Type.Optional(
      Nullable(
        Type.String({ description: 'Served by GET /media/{path}?t=<ticket> (see GET /media-ticket)' }),
      ),
    ),
    media_id: Type.Optional(MediaId),
    created_by: Type.Optional(Nullable(Type.String())),
    created_by_person_id: Type.Optional(Nullable(Type.Integer())),
    archived: Type.Optional(Type.Boolean()),
    created_at: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    updated_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the version last changed (a release, a re-import)',
      }),
    ),
  },
  {
    $id: 'VersionSummary',
    title: 'Asset version summary',
    examples: [VERSION_EXAMPLE],
  },
);
export type VersionSummary = Static<typeof VersionSummary>;
