import { sql } from 'kysely';
import { compiledOnce } from '../../db/driver/compiled.js';
import type { Db } from '../../db/index.js';
import type { NodesTable } from '../../db/schema.js';

export function findDepartmentId(db: Db, productionId: number, slug: string) {
  return db
    .selectFrom('departments')
    .where('production_id', '=', productionId)
    .where('slug', '=', slug)
    .select(['id', 'slug'])
    .executeTakeFirst();
}

/** Position after the production's last asset, so a new asset lists last. */
export async function nextAssetPosition(db: Db, productionId: number): Promise<number> {
  const row = await db
    .selectFrom('nodes')
    .where('production_id', '=', productionId)
    .where('kind', '<>', 'scene')
    .select((eb) => eb.fn.max('position').as('last'))
    .executeTakeFirst();
  return row?.last === null || row?.last === undefined ? 0 : Number(row.last) + 1;
}

export function insertAsset(
  db: Db,
  row: {
    productionId: number;
    label: string;
    kind: string;
    status: NodesTable['status'];
    departmentId: number | null;
    position: number;
    at: string;
  },
) {
  return db
    .insertInto('nodes')
    .values({
      production_id: row.productionId,
      ref: null,
      kind: row.kind,
      label: row.label,
      status: row.status,
      department_id: row.departmentId,
      position: row.position,
      created_at: row.at,
      updated_at: row.at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

// A note and a landed version run these on every write: compiled once each (compiledOnce).
const touchAssetOnce = compiledOnce(
  (db: Db, at: string, nodeId: number, productionId: number) =>
    db
      .updateTable('nodes')
      .set({ updated_at: at })
      .where('id', '=', nodeId)
      .where('production_id', '=', productionId)
      .where('kind', '<>', sql.lit('scene'))
      .where('retired_at', 'is', null)
      .returning(['id', 'label', 'kind']),
  ['at', 1, 2],
);

/**
 * Bumps an asset's updated_at and returns it, or undefined for a scene, an unknown node or
 * another production's. Being an UPDATE, it is also the write's lock on the node: PostgreSQL
 * holds the row lock to commit, so concurrent writes to one asset (two uploads numbering
 * their versions) queue here; SQLite takes its write lock here.
 */
export async function touchAsset(db: Db, productionId: number, nodeId: number, at: string) {
  const [row] = await touchAssetOnce(db, at, nodeId, productionId);
  return row;
}

/** Existence check without a lock, to refuse an upload before its bytes are streamed. */
export function findAsset(db: Db, productionId: number, nodeId: number) {
  return db
    .selectFrom('nodes')
    .where('id', '=', nodeId)
    .where('production_id', '=', productionId)
    .where('kind', '<>', 'scene')
    .where('retired_at', 'is', null)
    .select(['id'])
    .executeTakeFirst();
}

const versionOfNodeOnce = compiledOnce(
  (db: Db, nodeId: number, versionId: number) =>
    db
      .selectFrom('versions')
      .where('node_id', '=', nodeId)
      .where('id', '=', versionId)
      .select(['id', 'version']),
  [1, 2],
);

/** A version of the node by id (the node is the production's own: touchAsset found it first). */
export async function versionOfNode(db: Db, nodeId: number, versionId: number) {
  const [row] = await versionOfNodeOnce(db, nodeId, versionId);
  return row;
}

const newestVersionOnce = compiledOnce(
  (db: Db, nodeId: number) =>
    db
      .selectFrom('versions')
      .where('node_id', '=', nodeId)
      .select(['id', 'version'])
      .orderBy('version', 'desc')
      .limit(sql.lit(1)),
  [1],
);

/** The node's highest-numbered version, released or not. */
export async function newestVersion(db: Db, nodeId: number) {
  const [row] = await newestVersionOnce(db, nodeId);
  return row;
}

export async function nextVersionNumber(db: Db, nodeId: number): Promise<number> {
  const row = await db
    .selectFrom('versions')
    .where('node_id', '=', nodeId)
    .select(sql<number | string | null>`max(version)`.as('last'))
    .executeTakeFirst();
  return Number(row?.last ?? 0) + 1;
}

const insertVersionNoteOnce = compiledOnce(
  (db: Db, productionId: number, versionId: number, text: string, author: string, at: string) =>
    db
      .insertInto('version_notes')
      .values({ production_id: productionId, version_id: versionId, text, author, created_at: at })
      .returning('id'),
  [1, 2, 'text', 'author', 'at'],
);

export async function insertVersionNote(
  db: Db,
  row: { productionId: number; versionId: number; text: string; author: string; at: string },
) {
  const [inserted] = await insertVersionNoteOnce(
    db,
    row.productionId,
    row.versionId,
    row.text,
    row.author,
    row.at,
  );
  return inserted!;
}

/**
 * PostgreSQL: the whole of a note in one statement, one round trip where it took five: the
 * asset's updated_at bumped (touchAsset's lock on it), the note on its newest version (or on
 * `versionId`, a version of this asset) and the note's activity entry, whose summary is the
 * asset's label in quotes, " v", the version's number, then `summaryAfter`. Answers undefined
 * for a scene, an unknown node or another production's (nothing written), and a row with a null
 * `id` when the asset has no such version (only the asset touched). The version is the newest
 * as of the statement's start: a version committed while the statement waited for the asset's
 * lock was made concurrently with the note, and the note lands on the one before it.
 */
export async function touchAssetAndNote(
  db: Db,
  note: {
    productionId: number;
    nodeId: number;
    versionId: number | null;
    text: string;
    author: string;
    at: string;
  },
  entry: {
    actor: string;
    summaryAfter: string;
    apiKeyId: number | null;
    personId: number | null;
  },
): Promise<{ id: number | null; version_id: number | null; version: number | null } | undefined> {
  const { rows } = await sql<{ id: number | null; version_id: number | null; version: number | null }>`
    with touched as (
      update nodes set updated_at = ${note.at}::text
      where id = ${note.nodeId}::integer and production_id = ${note.productionId}::integer
        and kind <> 'scene' and retired_at is null
      returning id, label
    ), target as (
      select versions.id, versions.version from versions, touched
      where versions.node_id = touched.id
        and (${note.versionId}::bigint is null or versions.id = ${note.versionId}::bigint)
      order by versions.version desc limit 1
    ), note as (
      insert into version_notes (production_id, version_id, text, author, created_at)
      select ${note.productionId}::integer, target.id, ${note.text}::text, ${note.author}::text, ${note.at}::text
      from target
      returning id
    ), entry as (
      insert into activity (production_id, at, actor, verb, summary, node_id, api_key_id, person_id)
      select ${note.productionId}::integer, ${note.at}::text, ${entry.actor}::text, 'noted',
        '"' || touched.label || '" v' || target.version || ${entry.summaryAfter}::text,
        ${note.nodeId}::integer, ${entry.apiKeyId}::integer, ${entry.personId}::integer
      from target, touched
      returning id
    )
    select note.id, target.id as version_id, target.version
    from touched left join target on true left join note on true`.execute(db);
  return rows[0];
}

export function insertVersion(
  db: Db,
  row: {
    productionId: number;
    nodeId: number;
    version: number;
    variant: string;
    note: string | null;
    mediaId: number;
    createdBy: string;
    createdByPersonId: number | null;
    at: string;
  },
) {
  return db
    .insertInto('versions')
    .values({
      production_id: row.productionId,
      ref: null,
      node_id: row.nodeId,
      version: row.version,
      variant: row.variant,
      status: 'wip',
      released: 0,
      archived: 0,
      note: row.note,
      media_id: row.mediaId,
      created_by: row.createdBy,
      created_by_person_id: row.createdByPersonId,
      created_at: row.at,
      // a document sync never touches a landed version
      source: 'api',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}
