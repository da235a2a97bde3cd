import type { ChangeKind, ChangeLog } from '../../db/change-log.js';
import type { Plan, PlanKind } from './plan.js';

/** The plan's kinds as the change log names them; the feed and history have their own readers. */
const KIND: Partial<Record<PlanKind, ChangeKind>> = {
  production: 'production',
  episodes: 'episode',
  organisations: 'organisation',
  departments: 'department',
  people: 'person',
  scenes: 'scene',
  assets: 'asset',
  media: 'media',
  versions: 'version',
  ingredients: 'ingredient',
  shoot_days: 'shoot_day',
  approvals: 'approval',
  department_notes: 'department_note',
  deliveries: 'delivery',
  // a package file is a media object
  package_files: 'media',
  engagements: 'engagement',
  grants: 'grant',
  submissions: 'submission',
  purchase_orders: 'purchase_order',
  cost_reports: 'cost_report',
  script_changes: 'script_change',
  jobs: 'job',
};

/**
 * What a sync changed, for the change log: every object the plan creates, updates, retires or
 * deletes (a deletion is a retirement to a reader), and every kept object whose document
 * changes were applied all the same. A first import logs the production alone: a reader loads
 * a new production from its lists, not from a log of its every row.
 */
export function changesOfPlan(
  log: ChangeLog,
  plan: Plan,
  productionId: number,
  refs: Record<string, number>,
): ChangeLog {
  if (plan.production.created) return log.created('production', productionId);
  for (const c of plan.changes) {
    const kind = KIND[c.kind];
    if (!kind) continue;
    const id = c.kind === 'production' ? productionId : (c.id ?? refs[c.key] ?? null);
    if (id === null) continue;
    if (c.action === 'created') log.created(kind, id);
    else if (c.action === 'updated') log.updated(kind, id);
    // a file taken out of its package is still a media object: changed, as the API reports it
    else if (c.kind === 'package_files' && c.action === 'retired') log.updated(kind, id);
    else if (c.action === 'retired' || c.action === 'deleted') log.retired(kind, id);
    else if (c.applied && c.applied.length > 0) log.updated(kind, id);
  }
  return log;
}
