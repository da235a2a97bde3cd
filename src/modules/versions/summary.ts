import { Type, type Static } from 'typebox';
import type { Db } from '../../db/index.js';
import { EPOCH, stampOf } from '../../db/updated-at.js';
import { toBool } from '../../db/values.js';
import { MediaId, Nullable } from '../../http/schemas.js';
import { mediaPathOf } from '../../media/paths.js';

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

/** What a version summary is made of, from `versions as v` left-joined to `media as m`. */
export const VERSION_COLUMNS = [
  'v.id',
  'v.node_id',
  'v.version',
  'v.variant',
  'v.status',
  'v.released',
  'v.note',
  'v.created_by',
  'v.created_by_person_id',
  'v.archived',
  'v.created_at',
  'v.media_id',
  'v.updated_at',
  'm.storage_key',
] as const;

/**
 * Released versions of many nodes in one query, oldest version first within a node. The node
 * ids must be the production's own (every caller found them by a production-scoped query):
 * filtering `versions` on its production as well would offer the planner
 * `versions_production_released`, which walks every released version of the production and
 * which SQLite picks whenever statistics are missing (bench/FINDINGS.md §1). Without it the
 * only index that applies is `versions_node_version`, whatever the statistics.
 */
export function releasedVersionsOf(db: Db, nodeIds: readonly number[]) {
  return db
    .selectFrom('versions as v')
    .leftJoin('media as m', 'm.id', 'v.media_id')
    .where('v.released', '=', 1)
    .where('v.node_id', 'in', nodeIds.length ? [...nodeIds] : [-1])
    .select(VERSION_COLUMNS)
    .orderBy('v.node_id')
    .orderBy('v.version')
    .execute();
}

export type VersionRow = Awaited<ReturnType<typeof releasedVersionsOf>>[number];

/*
 * Every answer that shows a version is built here from a version row, so a field reads the
 * same in a bundle, an asset record and an upload's answer.
 */

/** A released version (bundles, the asset record): only released rows come here. */
export function toVersionSummary(row: VersionRow): VersionSummary {
  return {
    id: row.id,
    version: row.version,
    variant: row.variant,
    status: row.status,
    released: true,
    note: row.note,
    media_path: mediaPathOf(row.storage_key),
    media_id: row.storage_key ? row.media_id : null,
    created_by: row.created_by,
    created_by_person_id: row.created_by_person_id,
    archived: toBool(row.archived),
    created_at: row.created_at,
    updated_at: stampOf(row.updated_at, row.created_at ?? EPOCH),
  };
}

/**
 * A version not yet released, as the asset record shows it: a stub with its notes, and no
 * media, upload note or ingredients until a final approval releases it.
 */
export function toLockedVersion<Note>(row: VersionRow, notes: Note[]) {
  return {
    id: row.id,
    version: row.version,
    variant: row.variant,
    status: row.status,
    released: false as const,
    locked: true as const,
    notes,
  };
}

/** The row of a version an upload has just landed: its file, author and time are known. */
export type LandedVersionRow = Pick<
  VersionRow,
  | 'id'
  | 'node_id'
  | 'version'
  | 'variant'
  | 'status'
  | 'released'
  | 'note'
  | 'storage_key'
  | 'created_by_person_id'
> & { media_id: number; created_by: string; created_at: string };

/** A version an upload has just landed, with the file as stored for the client to verify. */
export function toLandedVersion(
  row: LandedVersionRow,
  file: { contentType: string; size: number; sha256: string },
) {
  const released = toBool(row.released);
  return {
    id: row.id,
    node_id: row.node_id,
    version: row.version,
    variant: row.variant,
    status: row.status,
    released,
    locked: !released,
    note: row.note,
    media_id: row.media_id,
    media_path: mediaPathOf(row.storage_key),
    content_type: file.contentType,
    size: file.size,
    sha256: file.sha256,
    created_by: row.created_by,
    created_by_person_id: row.created_by_person_id,
    created_at: row.created_at,
  };
}
