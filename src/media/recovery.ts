import type { Db } from '../db/index.js';
import { chunks } from '../util/chunks.js';
import type { FileMediaStore } from './store.js';

export interface Recovered {
  /** Staged files whose row had committed: moved into place. */
  placed: number;
  /** Staged files no committed row names (a write that died before its commit): removed. */
  removed: number;
}

/**
 * Settles the files of writes that a crash interrupted (see commitStaged): a staged file
 * whose media row committed is moved into place; one whose row never committed is removed.
 * Runs at start-up, before the server listens; one query per 500 staged files.
 */
export async function recoverStaged(db: Db, store: FileMediaStore, olderThanMs?: number): Promise<Recovered> {
  const abandoned = await store.abandonedStaging(olderThanMs);
  const files = abandoned.flatMap((a) => a.files);
  const keys = files.flatMap((f) => (f.key === null ? [] : [f.key]));
  const committed = new Set<string>();
  for (const batch of chunks(keys)) {
    const rows = await db
      .selectFrom('media')
      .where('storage_key', 'in', batch)
      .select('storage_key')
      .execute();
    for (const r of rows) if (r.storage_key) committed.add(r.storage_key);
  }
  const out: Recovered = { placed: 0, removed: 0 };
  for (const f of files) {
    if (f.key !== null && committed.has(f.key)) {
      await store.place(f.path, f.key);
      out.placed++;
    } else {
      await store.removeStaged(f.path);
      out.removed++;
    }
  }
  for (const a of abandoned) await store.removeStagingDir(a.dir);
  return out;
}
