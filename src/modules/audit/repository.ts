import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';
import { auditNow } from '../../auth/audit-repository.js';

export interface AuditFilter {
  actor?: string;
  engagementId?: number;
  action?: string;
  objectType?: string;
  objectId?: number;
  since?: string;
  until?: string;
}

/** One page of a production's audit rows, newest first by default (by id: the order they were written in). */
export function auditRows(
  db: Db,
  productionId: number,
  filter: AuditFilter,
  window: PageWindow,
  direction: 'asc' | 'desc' = 'desc',
) {
  let q = db.selectFrom('audit_events as a').where('a.production_id', '=', productionId).selectAll('a');
  const { actor, action } = filter;
  if (actor !== undefined)
    q = q.where((eb) =>
      eb.or([eb('a.key_prefix', '=', actor), eb('a.key_label', '=', actor), eb('a.actor', '=', actor)]),
    );
  if (filter.engagementId !== undefined) q = q.where('a.engagement_id', '=', filter.engagementId);
  if (action !== undefined)
    q = action.includes('.') ? q.where('a.action', '=', action) : q.where('a.action', 'like', `${action}.%`);
  if (filter.objectType !== undefined) q = q.where('a.object_type', '=', filter.objectType);
  if (filter.objectId !== undefined) q = q.where('a.object_id', '=', filter.objectId);
  if (filter.since !== undefined) q = q.where('a.at', '>=', filter.since);
  if (filter.until !== undefined) q = q.where('a.at', '<', filter.until);
  return keysetPage(q, ['a.id'], direction, window).orderBy('a.id', direction).execute();
}

/**
 * Removes up to `batch` rows written before `cutoff` (any production), answering how many: the
 * caller repeats while a batch comes back full, so no one statement holds the table for long.
 */
export async function pruneBatch(db: Db, cutoff: string, batch: number): Promise<number> {
  const ids = await db
    .selectFrom('audit_events')
    .where('at', '<', cutoff)
    .select('id')
    .orderBy('at')
    .limit(batch)
    .execute();
  if (ids.length === 0) return 0;
  await db
    .deleteFrom('audit_events')
    .where(
      'id',
      'in',
      ids.map((r) => r.id),
    )
    .execute();
  return ids.length;
}

/** The database's clock, read once (the retention cutoff is counted from it). */
export async function readDatabaseNow(db: Db): Promise<string> {
  const { rows } = await sql<{ now: string }>`select ${auditNow(db)} as now`.execute(db);
  return rows[0]!.now;
}
