import { dbClock } from '../../db/clock.js';
import type { Db } from '../../db/index.js';

/** The key behind a ticket still stands: not revoked, not expired, production-wide, of that production. */
export async function keyStillValid(db: Db, keyId: number, productionId: number): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .where('id', '=', keyId)
    .where('production_id', '=', productionId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', dbClock(db))]))
    .where('engagement_id', 'is', null)
    .select('id')
    .executeTakeFirst();
  return row !== undefined;
}

export function findMediaByKey(db: Db, productionId: number, storageKey: string) {
  return db
    .selectFrom('media')
    .where('production_id', '=', productionId)
    .where('storage_key', '=', storageKey)
    .select(['storage_key', 'content_type', 'sha256', 'label'])
    .executeTakeFirst();
}
