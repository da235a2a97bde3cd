import type { ChangeKind, ChangeLog } from './change-log.js';
import type { Db } from './index.js';
import { chunks } from '../util/chunks.js';

/**
 * `updated_at` is stamped from the change log, in the write's own transaction and with the
 * log's own time, so every path that records a change (API, storage agent, CLI, import and
 * sync) keeps the column true without knowing it exists, and `updated_since` agrees with the
 * change feed. Nodes (scenes, assets) and approvals are left out: their write paths have set
 * their `updated_at` since the first schema and answer it in the write's response.
 */
const STAMPED = {
  department: 'departments',
  person: 'people',
  version: 'versions',
  media: 'media',
  shoot_day: 'shoot_days',
  department_note: 'department_notes',
  delivery: 'deliveries',
  engagement: 'engagements',
  grant: 'grants',
  purchase_order: 'purchase_orders',
  script_change: 'script_changes',
  job: 'generation_jobs',
  storage_task: 'storage_tasks',
  submission: 'work_items',
} as const satisfies Partial<Record<ChangeKind, string>>;

type StampedKind = keyof typeof STAMPED;
const isStamped = (kind: ChangeKind): kind is StampedKind => Object.hasOwn(STAMPED, kind);

/** One statement per kind the write touched (chunked for a large sync), whatever the row count. */
export async function stampUpdatedAt(
  trx: Db,
  productionId: number,
  log: ChangeLog,
  at: string,
): Promise<void> {
  const entries = log.entries();
  // A first import logs the production alone: every row it inserted is new as of now.
  if (entries.some((e) => e.kind === 'production' && e.op === 'created')) {
    for (const table of Object.values(STAMPED)) {
      await trx
        .updateTable(table)
        .set({ updated_at: at })
        .where('production_id', '=', productionId)
        .where('updated_at', 'is', null)
        .execute();
    }
  }
  const idsOf = new Map<StampedKind, number[]>();
  for (const e of entries) {
    if (!isStamped(e.kind)) continue;
    const list = idsOf.get(e.kind) ?? [];
    list.push(e.id);
    idsOf.set(e.kind, list);
  }
  for (const [kind, ids] of idsOf) {
    for (const part of chunks(ids, 4000)) {
      await trx
        .updateTable(STAMPED[kind])
        .set({ updated_at: at })
        .where('production_id', '=', productionId)
        .where('id', 'in', part)
        .execute();
    }
  }
}

/**
 * A stamped row's `updated_at` as the API answers it. Every committed row has one (see above
 * and migration 0008); the column is only nullable because SQLite cannot add it NOT NULL, so the
 * fallback is the row's own best time.
 */
/** The fallback for a row with no time of its own (never met on a committed row). */
export const EPOCH = '1970-01-01T00:00:00.000Z';

export const stampOf = (updatedAt: string | null, fallback: string): string => updatedAt ?? fallback;

/** The later of a row's stamp and a related one it shows (ISO-8601 UTC compares as text). */
export const laterStamp = (own: string | null, related: string | null | undefined): string =>
  related != null && (own === null || related > own) ? related : (own ?? EPOCH);
