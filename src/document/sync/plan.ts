import { zip } from '../../util/zip.js';

/**
 * What a sync does, object by object, as a value: `--plan` prints it, the sync applies it,
 * the sync's activity entry records its counts. One diff decides all three.
 */

export const PLAN_KINDS = [
  'production',
  'episodes',
  'organisations',
  'departments',
  'people',
  'scenes',
  'assets',
  'media',
  'versions',
  'ingredients',
  'shoot_days',
  'approvals',
  'department_notes',
  'deliveries',
  'package_files',
  'engagements',
  'grants',
  'submissions',
  'purchase_orders',
  'cost_reports',
  'script_changes',
  'jobs',
  'activity',
  'library',
] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];

/** `kept`: the document asked for a change (or a removal) and the API's state stands. */
export const ACTIONS = ['created', 'updated', 'retired', 'deleted', 'kept'] as const;
export type Action = (typeof ACTIONS)[number];

export interface Change {
  kind: PlanKind;
  action: Action;
  /** The document's handle: the ref, or the natural key of an object the document gives no ref. */
  key: string;
  /** The object's id; null for one the sync creates (the plan does not know it yet). */
  id: number | null;
  /** Updated: the fields that change. Kept: the fields whose API-written value stands. */
  fields?: string[];
  /** Why an object is retired or kept rather than deleted or changed. */
  reason?: string;
  /** Kept: the document's changes that were applied all the same. */
  applied?: string[];
}

export type Counts = Record<Action | 'unchanged', number>;

export interface Plan {
  production: { code: string; id: number | null; created: boolean };
  counts: Partial<Record<PlanKind, Counts>>;
  changes: Change[];
}

export const emptyCounts = (): Counts => ({
  created: 0,
  updated: 0,
  retired: 0,
  deleted: 0,
  kept: 0,
  unchanged: 0,
});

/** `scenes 1 updated, assets 1 created 1 retired` — the kinds that change, in plan order. */
export function summarise(plan: Plan): string {
  const parts: string[] = [];
  for (const kind of PLAN_KINDS) {
    const c = plan.counts[kind];
    if (!c) continue;
    const moved = ACTIONS.filter((a) => c[a] > 0).map((a) => `${c[a]} ${a}`);
    if (moved.length) parts.push(`${kind.replace('_', ' ')} ${moved.join(' ')}`);
  }
  return parts.length ? parts.join(', ') : 'no changes';
}

const describe = (c: Change): string => {
  const id = c.id === null ? '' : ` (id ${c.id})`;
  const fields = c.fields?.length ? ` [${c.fields.join(', ')}]` : '';
  const reason = c.reason ? `: ${c.reason}` : '';
  return `  ${c.action.padEnd(8)} ${c.kind.padEnd(17)} ${c.key}${id}${fields}${reason}`;
};

/** The plan for people: a table of counts, then one line per object that changes. */
export function formatPlan(plan: Plan, options: { applied: boolean }): string {
  const lines: string[] = [];
  const verb = options.applied ? 'synced' : 'would sync';
  const what = plan.production.created ? 'create' : 'update';
  lines.push(
    options.applied
      ? `${verb} production "${plan.production.code}"${plan.production.id === null ? '' : ` (id ${plan.production.id})`}: ${summarise(plan)}`
      : `plan for production "${plan.production.code}" (${what}; nothing has been changed): ${summarise(plan)}`,
  );
  const header = ['kind', ...ACTIONS, 'unchanged'];
  const rows = PLAN_KINDS.flatMap((k) => {
    const c = plan.counts[k];
    return c ? [[k, ...ACTIONS.map((a) => String(c[a])), String(c.unchanged)]] : [];
  });
  if (rows.length) {
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
    const fmt = (r: string[]) =>
      zip(r, widths)
        .map(([v, width], i) => (i === 0 ? v.padEnd(width) : v.padStart(width)))
        .join('  ');
    lines.push('', fmt(header), ...rows.map(fmt));
  }
  if (plan.changes.length) {
    lines.push('', ...plan.changes.map(describe));
  }
  return lines.join('\n');
}
