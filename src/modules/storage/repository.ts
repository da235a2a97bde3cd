import { sql, type Insertable } from 'kysely';
import type { StorageEventsTable } from '../../db/schema.js';
import { insertMany } from '../../db/bulk-insert.js';
import type { Db, Dialect } from '../../db/index.js';
import { chunks } from '../../util/chunks.js';

export async function productionFilespace(db: Db, productionId: number): Promise<string | null> {
  const row = await db
    .selectFrom('productions')
    .where('id', '=', productionId)
    .select('filespace')
    .executeTakeFirst();
  return row?.filespace ?? null;
}

/**
 * Serialises the writers of one production's library (event batches, proxies, task acks) for
 * the length of the transaction. SQLite transactions are already serial; PostgreSQL takes an
 * advisory lock, so two agents replaying at once apply one after the other, never interleaved.
 */
export async function lockLibrary(trx: Db, dialect: Dialect, productionId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(${LIBRARY_LOCK_CLASS}, ${productionId})`.execute(trx);
}

/** First key of the two-key advisory lock: "SL" (storage library). */
const LIBRARY_LOCK_CLASS = 0x534c;

export type EventRow = Omit<Insertable<StorageEventsTable>, 'id'>;

/**
 * Inserts the events whose dedupe key is new and answers their ids by key. The unique
 * (production_id, dedupe_key) index decides, so a concurrent replay can never add a second row.
 */
export async function insertNewEvents(trx: Db, rows: readonly EventRow[]): Promise<Map<string, number>> {
  const got = await insertMany<{ id: number; dedupe_key: string }>(trx, 'storage_events', rows, {
    skipConflictsOn: ['production_id', 'dedupe_key'],
    returning: ['id', 'dedupe_key'],
  });
  return new Map(got.map((r) => [r.dedupe_key, Number(r.id)]));
}

export interface LiveFile {
  id: number;
  path: string;
  size: number | null;
  detected_at: string;
  updated_at: string;
  proxy_media_id: number | null;
}

export async function liveFilesAt(
  db: Db,
  productionId: number,
  paths: readonly string[],
): Promise<LiveFile[]> {
  const out: LiveFile[] = [];
  for (const part of chunks(paths, 1000)) {
    const rows = await db
      .selectFrom('library_files')
      .where('production_id', '=', productionId)
      .where('retired_at', 'is', null)
      .where('path', 'in', part)
      .select(['id', 'path', 'size', 'detected_at', 'updated_at', 'proxy_media_id'])
      .execute();
    for (const r of rows) out.push({ ...r, size: r.size === null ? null : Number(r.size) });
  }
  return out;
}

/** `case id when … then … end`, so rows with different values change in one statement. */
function perRow<R extends { id: number }, V>(
  rows: readonly R[],
  value: (r: R) => V,
  type: 'text' | 'bigint',
) {
  const whens = rows.map((r) => sql`when ${r.id} then cast(${value(r)} as ${sql.raw(type)})`);
  return sql<V>`case id ${sql.join(whens, sql` `)} end`;
}

export async function retireFiles(trx: Db, rows: readonly { id: number; at: string }[]): Promise<void> {
  for (const part of chunks(rows)) {
    await trx
      .updateTable('library_files')
      .set({ retired_at: perRow(part, (r) => r.at, 'text') })
      .where(
        'id',
        'in',
        part.map((r) => r.id),
      )
      .execute();
  }
}

/**
 * Takes rows that are about to be renamed out of the unique live-path index (retired_at is
 * not null) for the rest of the transaction, so renames that swap or chain paths never collide
 * half-way through; `rewriteFiles` puts them back. Never visible outside the transaction.
 */
export async function detachFiles(trx: Db, ids: readonly number[]): Promise<void> {
  for (const part of chunks(ids, 1000)) {
    await trx.updateTable('library_files').set({ retired_at: '' }).where('id', 'in', part).execute();
  }
}

export interface FileRewrite {
  id: number;
  path: string;
  size: number | null;
  updated_at: string;
}

export async function rewriteFiles(trx: Db, rows: readonly FileRewrite[]): Promise<void> {
  for (const part of chunks(rows, 300)) {
    await trx
      .updateTable('library_files')
      .set({
        path: perRow(part, (r) => r.path, 'text'),
        size: perRow(part, (r) => r.size, 'bigint'),
        updated_at: perRow(part, (r) => r.updated_at, 'text'),
        retired_at: null,
      })
      .where(
        'id',
        'in',
        part.map((r) => r.id),
      )
      .execute();
  }
}

export interface NewFile {
  path: string;
  size: number | null;
  detected_at: string;
  updated_at: string;
}

export async function insertFiles(trx: Db, productionId: number, rows: readonly NewFile[]): Promise<void> {
  await insertMany(
    trx,
    'library_files',
    rows.map((r) => ({ production_id: productionId, ...r, retired_at: null, proxy_media_id: null })),
  );
}
