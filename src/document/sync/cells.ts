/**
 * Values a section wants a row to hold. A reference to an object the same sync creates has
 * no id yet: it is a `Pending`, filled in when that object is inserted (sections write in
 * dependency order, so it always is by the time a row naming it is written). A pending id
 * never equals a stored one, so the plan sees the change before anything is written.
 */
export class Pending {
  id: number | null = null;
  constructor(readonly key: string) {}
}

export type Id = number | Pending;

/** Insertable row of a table where id columns may still be pending. */
export type Wanted<T> = { [K in keyof T]: T[K] | (number extends T[K] ? Pending : never) };

export function idOf(cell: Id): number {
  if (cell instanceof Pending) {
    if (cell.id === null) throw new Error(`internal: "${cell.key}" written before it was created`);
    return cell.id;
  }
  return cell;
}

/** The row with every pending id replaced by the real one. */
export function resolved<T>(row: Wanted<T>): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = v instanceof Pending ? idOf(v) : v;
  return out as T;
}

/** Stored and wanted values compare across dialects: 5 and "5" are equal, a pending id equals nothing. */
export function same(a: unknown, b: unknown): boolean {
  if (a instanceof Pending || b instanceof Pending) return a === b;
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  return typeof a !== typeof b && String(a) === String(b);
}

/** Columns whose stored value differs from the wanted one. */
export function changedColumns<T, K extends keyof T>(
  current: Partial<T>,
  wanted: Partial<T>,
  columns: readonly K[],
): K[] {
  return columns.filter((c) => !same(current[c], wanted[c]));
}
