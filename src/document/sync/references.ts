import type { SyncContext } from './context.js';
import type { Table } from './write.js';

export interface ReferenceFilter {
  /** Only referencing rows where this column compares so. */
  where?: { column: string; op: 'is' | 'is not' | '=' | '<>'; value: string | number | null };
  /** Referencing rows that do not count (the sync deletes them or rewrites the column). */
  exclude?: ReadonlySet<number>;
}

/**
 * Which of `ids` a column of another table still names: one query per column, however many
 * candidates (chunked). Sections use it to decide whether an object that left the document is
 * still referred to (retire or keep it) or not (delete it).
 */
export async function referenced(
  ctx: SyncContext,
  table: Table,
  column: string,
  ids: readonly number[],
  filter: ReferenceFilter = {},
): Promise<Set<number>> {
  const out = new Set<number>();
  for (let i = 0; i < ids.length; i += 1000) {
    // table and column names come from the section code, never from the document
    let q = ctx.db
      .selectFrom(table as 'nodes')
      .where(column as 'id', 'in', ids.slice(i, i + 1000))
      .select(['id as row_id', `${column} as target` as 'id as target']);
    const w = filter.where;
    if (w) q = q.where(w.column as 'id', w.op, w.value as number);
    for (const r of await q.execute()) {
      if (filter.exclude?.has(Number(r.row_id))) continue;
      out.add(Number(r.target));
    }
  }
  return out;
}

/** A column that refers to the objects, and how the plan names what refers (`its versions`). */
export type Reference = [table: Table, column: string, filter: ReferenceFilter, what: string];

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
  for (const [table, column, filter, what] of refs) {
    const left = ids.filter((id) => !out.has(id));
    if (left.length === 0) break;
    for (const id of await referenced(ctx, table, column, left, filter)) out.set(id, what);
  }
  return out;
}
