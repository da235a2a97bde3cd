import { sql, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { KeyValues, PageWindow } from '../domain/page.js';

/**
 * One page of a list query already ordered by `columns` (all ascending or all descending, the
 * last one unique): the rows after the cursor's key, by row-value comparison (both databases
 * use the sort index for it), and one row more than the page to tell whether another follows.
 */
export function keysetPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: readonly string[],
  direction: 'asc' | 'desc',
  window: PageWindow,
): SelectQueryBuilder<DB, TB, O> {
  let q = query;
  if (window.after !== undefined) q = q.where(afterKey(columns, direction, window.after));
  if (window.limit !== undefined) q = q.limit(window.limit + 1);
  return q;
}

const afterKey = (columns: readonly string[], direction: 'asc' | 'desc', key: KeyValues) =>
  sql<SqlBool>`(${sql.join(columns.map((c) => sql.ref(c)))}) ${sql.raw(direction === 'asc' ? '>' : '<')} (${sql.join(key.map((v) => sql`${v}`))})`;

/**
 * The `updated_since` filter: without it a list hides retired rows, as it always has; with it a
 * list answers only rows changed after the instant, retired ones included (retiring stamps
 * `updated_at`), so a mirror learns what to drop. `alsoChanged` counts a row as changed for a
 * reason of its own (a delivery whose gating approval changed, a newly granted turnover).
 */
export function changedSince<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  updatedAt: string,
  retiredAt: string | null,
  since: string | undefined,
  alsoChanged?: (since: string) => RawBuilder<SqlBool>,
): SelectQueryBuilder<DB, TB, O> {
  if (since !== undefined) {
    const own = sql<SqlBool>`${sql.ref(updatedAt)} > ${since}`;
    return query.where(alsoChanged ? sql<SqlBool>`(${own} or ${alsoChanged(since)})` : own);
  }
  return retiredAt === null ? query : query.where(sql<SqlBool>`${sql.ref(retiredAt)} is null`);
}
