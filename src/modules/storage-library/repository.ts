import { PostgresAdapter, sql } from 'kysely';
import { insertMany } from '../../db/driver/bulk-insert.js';
import type { Db, Dialect } from '../../db/index.js';
import { chunks } from '../../util/chunks.js';
import { compiledOnce } from '../../db/driver/compiled.js';

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

export interface LiveFile {
  id: number;
  path: string;
  size: number | null;
  detected_at: string;
  updated_at: string;
  proxy_media_id: number | null;
}

const liveColumns = ['id', 'path', 'size', 'detected_at', 'updated_at', 'proxy_media_id'] as const;

/**
 * PostgreSQL: the paths as one array, so one text serves every batch; planned on each run, as a
 * first scan grows the library faster than its statistics follow (planEachRun).
 */
const liveFilesOnPostgres = compiledOnce(
  (db: Db, productionId: number, paths: readonly string[]) =>
    db
      .selectFrom('library_files')
      .where('production_id', '=', productionId)
      .where('retired_at', 'is', null)
      .where(sql<boolean>`path = any(${paths}::text[])`)
      .select(liveColumns),
  [1, ['sample']],
  'each run',
);

export async function liveFilesAt(
  db: Db,
  productionId: number,
  paths: readonly string[],
): Promise<LiveFile[]> {
  const out: LiveFile[] = [];
  for (const part of chunks(paths, 1000)) {
    const rows =
      db.getExecutor().adapter instanceof PostgresAdapter
        ? await liveFilesOnPostgres(db, productionId, part)
        : await db
            .selectFrom('library_files')
            .where('production_id', '=', productionId)
            .where('retired_at', 'is', null)
            .where('path', 'in', part)
            .select(liveColumns)
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
