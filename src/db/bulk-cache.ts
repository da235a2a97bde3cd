import { sql } from 'kysely';
import { onPostgres } from './driver/kysely-surface.js';
import type { Db } from './index.js';

/**
 * SQLite's page cache while a production is loaded in bulk, in KiB. A first import writes a
 * whole production in one transaction; with SQLite's default of 2 MB, nearly every row added
 * to a large index (library paths, activity by time) read its page back from the WAL and
 * spilled another: a season of millions of versions imported markedly faster with this, and
 * took less memory at its peak (bench/FINDINGS.md, "The import at scale 10").
 */
const BULK_CACHE_KIB = 256 * 1024;

/** Runs `load` with SQLite's larger bulk page cache, the connection's own restored after. */
export async function withBulkPageCache<T>(db: Db, load: () => Promise<T>): Promise<T> {
  if (onPostgres(db)) return load();
  const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(db);
  const before = Number(rows[0]?.cache_size ?? -2000);
  await sql.raw(`pragma cache_size = -${BULK_CACHE_KIB}`).execute(db);
  try {
    return await load();
  } finally {
    await sql.raw(`pragma cache_size = ${before}`).execute(db);
  }
}
