import type { Db } from '../../db/index.js';
import { MAX_PAGE, normaliseInstant, openPage, type Page, type PagedList } from '../../domain/page.js';
import { auditRows, type AuditFilter } from './repository.js';
import { DEFAULT_AUDIT_PAGE, type AuditEvent, type AuditQuery } from './schemas.js';

const AUDIT: PagedList = { name: 'audit', key: ['int'], maxLimit: MAX_PAGE };

type Row = Awaited<ReturnType<typeof auditRows>>[number];

/** One audit row as the API and the export show it. */
export const toAuditEvent = (r: Row): AuditEvent => ({
  id: Number(r.id),
  at: r.at,
  actor: r.actor,
  person_id: r.person_id,
  key_id: r.key_id,
  key_prefix: r.key_prefix,
  key_label: r.key_label,
  engagement_id: r.engagement_id,
  action: r.action,
  object_type: r.object_type,
  object_id: r.object_id,
  summary: r.summary,
  ip: r.ip,
  outcome: r.outcome === 'refused' ? 'refused' : 'ok',
});

export function filterOf(query: Omit<AuditQuery, 'limit' | 'cursor'>): AuditFilter {
  return {
    actor: query.actor,
    engagementId: query.engagement_id,
    action: query.action,
    objectType: query.object_type,
    objectId: query.object_id,
    since: normaliseInstant('since', query.since),
    until: normaliseInstant('until', query.until),
  };
}

/** One page of a production's audit trail, newest first, narrowed by the query's filters. */
export async function listAudit(db: Db, productionId: number, query: AuditQuery): Promise<Page<AuditEvent>> {
  const { window, close } = openPage(AUDIT, productionId, { ...query }, DEFAULT_AUDIT_PAGE);
  const rows = await auditRows(db, productionId, filterOf(query), window);
  return close(rows, (r) => [Number(r.id)], toAuditEvent);
}

/**
 * Every row matching the filters, oldest first, a page at a time (the export streams them: no
 * more than one page is held).
 */
export async function* allAudit(
  db: Db,
  productionId: number,
  filter: AuditFilter,
  pageSize = 1000,
): AsyncGenerator<AuditEvent> {
  let after: number | undefined;
  for (;;) {
    const window = { limit: pageSize, after: after === undefined ? undefined : [after], since: undefined };
    // a page reads one row more than its limit (to know whether more follow): yield it too
    const rows = await auditRows(db, productionId, filter, window, 'asc');
    for (const r of rows) yield toAuditEvent(r);
    if (rows.length <= pageSize) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}
