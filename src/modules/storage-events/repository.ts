import type { Insertable } from 'kysely';
import { insertMany } from '../../db/driver/bulk-insert.js';
import type { Db } from '../../db/index.js';
import type { StorageEventsTable } from '../../db/schema.js';

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
