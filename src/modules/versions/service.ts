// No routes: versions are shown inside the asset record and the bundles; this is their one mapper.
import { EPOCH, stampOf } from '../../db/updated-at.js';
import { toBool } from '../../db/values.js';
import { mediaPathOf } from '../../media/paths.js';
import type { IngredientRow, LandedVersionRow, VersionRow } from './repository.js';
import type { VersionSummary } from './schemas.js';

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

/*
 * What a released look is made of. The asset record shows each version's ingredients; a
 * character bundle shows the union over a costume's released versions. Both read them here
 * and map them with toIngredient, so an ingredient reads the same wherever it appears.
 */

/** An ingredient as answers show it: its media only while the file is there. */
export function toIngredient(row: IngredientRow) {
  return {
    id: row.id,
    kind: row.kind,
    label: row.label,
    relation: row.relation,
    media_path: mediaPathOf(row.storage_key),
    media_id: row.storage_key ? row.media_id : null,
  };
}
