import { PostgresAdapter, sql } from 'kysely';
import { insertMany } from './driver/bulk-insert.js';
import { COMMIT_CHANNEL } from './commit-listener.js';
import type { Db } from './index.js';
import { stampUpdatedAt } from './updated-at.js';
import { nowIso } from './values.js';

/**
 * What a write did to the production, object by object. Collected while the write runs and
 * committed as the write's last statement (see inWriteTransaction), so a refused or failed
 * write records nothing and a committed one always records its changes.
 */

/** The kinds of object a client can be told about; each maps to where the API shows it. */
export const CHANGE_KINDS = [
  'production',
  'episode',
  'organisation',
  'department',
  'person',
  'scene',
  'asset',
  'version',
  'ingredient',
  'note',
  'department_note',
  'media',
  'approval',
  'delivery',
  'shoot_day',
  'submission',
  'purchase_order',
  'cost_report',
  'script_change',
  'job',
  'engagement',
  'grant',
  'storage_event',
  'storage_task',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** A deleted object is reported as retired: either way a mirror drops it. */
export const CHANGE_OPS = ['created', 'updated', 'retired'] as const;
export type ChangeOp = (typeof CHANGE_OPS)[number];

const STRENGTH: Record<ChangeOp, number> = { updated: 0, created: 1, retired: 2 };

export class ChangeLog {
  /**
   * When the write happened: the log is made before the write's first statement, so every row
   * the write stamps is stamped at or after this, and `updated_since` just before a change's
   * `at` always finds the rows that change touched (the mirror in examples/ relies on it).
   */
  constructor(readonly at: string = nowIso()) {}

  private readonly byObject = new Map<string, { kind: ChangeKind; id: number; op: ChangeOp }>();

  /** One entry per object and write: created-then-updated is created; anything then retired is retired. */
  add(kind: ChangeKind, id: number, op: ChangeOp): this {
    const key = `${kind}:${id}`;
    const seen = this.byObject.get(key);
    if (!seen || STRENGTH[op] > STRENGTH[seen.op]) this.byObject.set(key, { kind, id, op });
    return this;
  }

  created(kind: ChangeKind, id: number): this {
    return this.add(kind, id, 'created');
  }

  updated(kind: ChangeKind, id: number): this {
    return this.add(kind, id, 'updated');
  }

  retired(kind: ChangeKind, id: number): this {
    return this.add(kind, id, 'retired');
  }

  get size(): number {
    return this.byObject.size;
  }

  entries(): Array<{ kind: ChangeKind; id: number; op: ChangeOp }> {
    return [...this.byObject.values()];
  }
}

/** Who a write is recorded under, and in which production. */
export interface WriteScope {
  productionId: number;
  actor: string | null;
}

/**
 * Stamps `updated_at` from the log, bumps the production's revision and appends the log. The
 * revision update takes the production row's lock until commit, so on PostgreSQL the change
 * ids of one production are handed out in commit order: a reader never sees a later change
 * before an earlier one has committed, and the feed has no gaps. Must be the transaction's last
 * statement (it holds that lock for the rest of the transaction). Answers the new revision, or
 * null when the write changed nothing. The write path records its groups' logs with
 * stampUpdatedAt and recordChanges instead (WriteHooks).
 */
export async function commitChanges(trx: Db, scope: WriteScope, log: ChangeLog): Promise<number | null> {
  if (log.size === 0) return null;
  await stampUpdatedAt(trx, scope.productionId, log, log.at);
  const [revision = null] = await recordChanges(trx, [{ scope, changes: log }]);
  return revision;
}

/**
 * The change logs of the writes of one group, in the order they ran, as if each had committed
 * its own: each write that changed something takes the next revision and its changes are
 * recorded under it. One revision update per production (taking its lock only now, as the
 * group's last statements, so on PostgreSQL change ids are still handed out in commit order)
 * and one insert for all the group's change rows. Each write has stamped `updated_at` itself
 * (stampUpdatedAt). Answers each write's revision, or null for a write that changed nothing.
 */
export async function recordChanges(
  trx: Db,
  writes: Array<{ scope: WriteScope; changes: ChangeLog }>,
): Promise<Array<number | null>> {
  const revisions: Array<number | null> = writes.map(() => null);
  const byProduction = new Map<number, Array<{ i: number; scope: WriteScope; changes: ChangeLog }>>();
  for (const [i, { scope, changes }] of writes.entries()) {
    if (changes.size === 0) continue;
    const list = byProduction.get(scope.productionId) ?? [];
    list.push({ i, scope, changes });
    byProduction.set(scope.productionId, list);
  }
  const rows = [];
  const announce = trx.getExecutor().adapter instanceof PostgresAdapter;
  for (const [productionId, group] of byProduction) {
    const { revision } = await trx
      .updateTable('productions')
      .set((eb) => ({ revision: eb('revision', '+', group.length) }))
      .where('id', '=', productionId)
      .returning('revision')
      // PostgreSQL: announced to every listening server when (and only if) the transaction
      // commits, in the same round trip (CommitListener)
      .$if(announce, (q) =>
        q.returning(
          sql<string>`pg_notify(${sql.raw(COMMIT_CHANNEL)}, id || ':' || revision)`.as('announced'),
        ),
      )
      .executeTakeFirstOrThrow();
    let next = revision - group.length;
    for (const { i, scope, changes: log } of group) {
      revisions[i] = ++next;
      for (const e of log.entries()) {
        rows.push({
          production_id: productionId,
          revision: next,
          at: log.at,
          kind: e.kind,
          object_id: e.id,
          op: e.op,
          actor: scope.actor,
        });
      }
    }
  }
  await insertMany(trx, 'changes', rows);
  return revisions;
}
