import { sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SyncContext } from './context.js';
import type { KeyedDiff } from './keyed.js';
import type { PlanKind } from './plan.js';
import type { Table } from './write.js';

/** A column of a table, by name: a misspelt one does not compile. */
type Column<T extends Table> = keyof Database[T] & string;

export interface ReferenceFilter<T extends Table> {
  /** Only referencing rows where this column compares so. */
  where?: { column: Column<T>; op: 'is' | 'is not' | '=' | '<>'; value: string | number | null };
  /** Referencing rows that do not count (the sync deletes them or rewrites the column). */
  exclude?: ReadonlySet<number>;
}

/** A column that refers to the objects, and how the plan names what refers (`its versions`). */
export type Reference = {
  [T in Table]: [table: T, column: Column<T>, filter: ReferenceFilter<T>, what: string];
}[Table];

/**
 * Which of `ids` a column of another table still names: one query per column, however many
 * candidates (chunked). Sections use it to decide whether an object that left the document is
 * still referred to (retire or keep it) or not (delete it).
 */
async function referenced(
  ctx: SyncContext,
  [table, column, filter]: Reference,
  ids: readonly number[],
): Promise<Set<number>> {
  const out = new Set<number>();
  // table and column names come from the section code, never from the document
  const { dynamic } = ctx.db;
  for (let i = 0; i < ids.length; i += 1000) {
    let q = ctx.db
      .selectFrom(table)
      .where(dynamic.ref(column), 'in', ids.slice(i, i + 1000))
      .select(['id as row_id', sql<number | string>`${sql.ref(column)}`.as('target')]);
    const w = filter.where;
    if (w) q = q.where(dynamic.ref(w.column), w.op, w.value);
    for (const r of await q.execute()) {
      if (filter.exclude?.has(Number(r.row_id))) continue;
      out.add(Number(r.target));
    }
  }
  return out;
}

/**
 * Ids referenced through any of several columns, each with what refers to it first; stops
 * asking once every id is referenced.
 */
export async function referencedByAny(
  ctx: SyncContext,
  ids: readonly number[],
  refs: readonly Reference[],
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const ref of refs) {
    const left = ids.filter((id) => !out.has(id));
    if (left.length === 0) break;
    for (const id of await referenced(ctx, ref, left)) out.set(id, ref[3]);
  }
  return out;
}

/**
 * What left the document and something that stays still refers to is kept (the plan says
 * what refers to it); the rest is deleted. `also`: ids held for a reason no column shows.
 */
export async function keepReferenced<T extends Table & PlanKind>(
  ctx: SyncContext,
  kind: T,
  diff: KeyedDiff<T>,
  refs: Reference[],
  also: ReadonlyMap<number, string> = new Map(),
): Promise<void> {
  const ids = diff.removed.map((r) => r.id);
  const held = ids.length ? await referencedByAny(ctx, ids, refs) : new Map<number, string>();
  for (const r of diff.removed) {
    const by = held.get(r.id) ?? also.get(r.id);
    if (by) {
      ctx.record(kind, 'kept', r.key, r.id, { reason: `referred to by ${by}` });
    } else {
      diff.deletes.push(r.id);
      ctx.record(kind, 'deleted', r.key, r.id);
    }
  }
  diff.removed = [];
}
