import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Database } from '../../db/schema.js';
import { changedColumns, Pending, resolved, type Wanted } from './cells.js';
import { matchByKey, type SyncContext } from './context.js';
import { madeUpId } from './made-up-refs.js';
import type { PlanKind } from './plan.js';
import { deleteIds, insertReturningIds, updateRows, type ColumnTypes, type Table } from './write.js';
import { zip } from '../../util/zip.js';

/*
 * The shape every keyed section shares: stored rows and wanted objects paired by key, each
 * pair compared column by column, new objects created, and what left the document handed to
 * the section to decide (retire, delete or keep). The section supplies the rows and the
 * rules; this file does the bookkeeping, the plan entries and the set-based writes.
 */

export interface StoredRow<T extends Table> {
  id: number;
  key: string;
  values: Partial<Selectable<Database[T]>>;
}

export interface WantedRow<T extends Table> {
  key: string;
  /** The document's ref (goes to the ref map), or null for an object keyed by its content. */
  ref: string | null;
  /** The row as the document wants it; on an update only `columns` are compared and written. */
  row: Wanted<Insertable<Database[T]>>;
}

export interface KeyedSpec<T extends Table> {
  kind: PlanKind | ((w: { row: unknown; values?: unknown }) => PlanKind);
  table: T;
  /** The document-owned columns a sync compares and writes, with their SQL types. */
  columns: ColumnTypes<T>;
  stored: readonly StoredRow<T>[];
  wanted: readonly WantedRow<T>[];
  /** Columns whose stored value stands against the document (the API changed them). */
  stands?: (stored: StoredRow<T>) => readonly string[];
  /** Child sets that differ (named like fields: `assets`, `steps`); they count as changes. */
  children?: (stored: StoredRow<T>, wanted: WantedRow<T>) => string[];
  /** Extra values written with every update (e.g. `updated_at`). */
  onUpdate?: () => Updateable<Database[T]>;
  /** Why a kept object's values stand, for the plan. */
  keptReason?: string | ((stored: StoredRow<T>) => string);
}

export interface Created<T extends Table> {
  key: string;
  pending: Pending;
  row: Wanted<Insertable<Database[T]>>;
}

export interface Updated<T extends Table> {
  id: number;
  key: string;
  set: Wanted<Updateable<Database[T]>>;
  /** Changed child sets to replace. */
  children: string[];
  wanted: WantedRow<T>;
}

export class KeyedDiff<T extends Table> {
  readonly creates: Created<T>[] = [];
  readonly updates: Updated<T>[] = [];
  /** Stored ids of wanted objects (updated or not), by key. */
  readonly matched = new Map<string, number>();
  /** Stored rows whose key left the document: the section decides what becomes of them. */
  removed: StoredRow<T>[] = [];
  readonly deletes: number[] = [];

  constructor(
    readonly table: T,
    readonly columns: ColumnTypes<T>,
  ) {}

  /** Inserts the created rows (filling their pending ids), then applies the updates. */
  async write(ctx: SyncContext): Promise<void> {
    const ids = await insertReturningIds(
      ctx.db,
      this.table,
      this.creates.map((c) => resolved(c.row)),
    );
    for (const [c, id] of zip(this.creates, ids)) c.pending.id = id;
    await updateRows(
      ctx.db,
      this.table,
      this.updates.map((u) => ({ id: u.id, set: resolved(u.set) as Updateable<Database[T]> })),
      {
        ...this.columns,
        updated_at: 'text',
        retired_at: 'text',
        retired_by: 'text',
        source: 'text',
      } as ColumnTypes<T>,
    );
  }

  async deleteRemoved(ctx: SyncContext): Promise<void> {
    await deleteIds(ctx.db, this.table, this.deletes);
  }
}

const kindOf = <T extends Table>(spec: KeyedSpec<T>, row: unknown): PlanKind =>
  typeof spec.kind === 'function' ? spec.kind({ row }) : spec.kind;

export function diffKeyed<T extends Table>(ctx: SyncContext, spec: KeyedSpec<T>): KeyedDiff<T> {
  const diff = new KeyedDiff(spec.table, spec.columns);
  const columns = Object.keys(spec.columns) as Array<keyof Database[T] & string>;
  const { pairs, creates, removed } = matchByKey(spec.stored, spec.wanted);
  // a new production's plan counts what it creates; listing every object would say nothing more
  const list = ctx.productionExists;
  for (const { current, wanted } of pairs) {
    if (wanted.ref) ctx.refs.set(wanted.ref, current.id);
    diff.matched.set(wanted.key, current.id);
    const kind = kindOf(spec, wanted.row);
    const changed: string[] = [
      ...changedColumns(
        current.values as Record<string, unknown>,
        wanted.row as Record<string, unknown>,
        columns as string[],
      ),
      ...(spec.children?.(current, wanted) ?? []),
    ];
    const standing = new Set(spec.stands?.(current) ?? []);
    const kept = changed.filter((c) => standing.has(c));
    const applied = changed.filter((c) => !standing.has(c));
    if (applied.length) {
      const set: Record<string, unknown> = { ...(spec.onUpdate?.() ?? {}) };
      for (const c of applied) if (c in spec.columns) set[c] = (wanted.row as Record<string, unknown>)[c];
      diff.updates.push({
        id: current.id,
        key: wanted.key,
        set: set as Wanted<Updateable<Database[T]>>,
        children: applied.filter((c) => !(c in spec.columns)),
        wanted,
      });
    }
    if (kept.length) {
      ctx.record(kind, 'kept', wanted.key, current.id, {
        fields: kept,
        reason:
          (typeof spec.keptReason === 'function' ? spec.keptReason(current) : spec.keptReason) ??
          'changed through the API',
        ...(applied.length ? { applied } : {}),
      });
    } else if (applied.length) ctx.record(kind, 'updated', wanted.key, current.id, { fields: applied });
    else ctx.unchanged(kind);
  }
  for (const wanted of creates) {
    const early = wanted.ref ? ctx.refs.get(wanted.ref) : undefined;
    const pending = early instanceof Pending ? early : new Pending(wanted.key);
    if (wanted.ref) ctx.refs.set(wanted.ref, pending);
    diff.creates.push({ key: wanted.key, pending, row: wanted.row });
    const kind = kindOf(spec, wanted.row);
    if (list) ctx.record(kind, 'created', wanted.key, null);
    else ctx.countsOf(kind).created++;
  }
  diff.removed = removed;
  return diff;
}

/**
 * The keys of wanted objects, where a ref an export made up (`<prefix>-<id>`, see
 * made-up-refs) names a stored row without a ref: that row's key, so the two pair.
 */
export function madeUpKeys(
  prefix: string,
  stored: ReadonlyArray<{ id: number; key: string; values: { ref?: string | null } }>,
  refs: ReadonlyArray<string | null | undefined>,
  keys: readonly string[],
): string[] {
  const refless = new Map<number, string>();
  for (const s of stored) if (s.values.ref === null) refless.set(s.id, s.key);
  return keys.map((key, i) => {
    const id = refless.size ? madeUpId(prefix, refs[i]) : null;
    return (id === null ? undefined : refless.get(id)) ?? key;
  });
}

/**
 * Gives every wanted ref its id (stored, or pending) before the section is compared, for
 * sections whose rows name each other (a scene's edges name assets of the same section).
 */
export function assignRefs<T extends Table>(
  ctx: SyncContext,
  stored: readonly StoredRow<T>[],
  wanted: readonly WantedRow<T>[],
): void {
  const { pairs, creates } = matchByKey(stored, wanted);
  for (const { current, wanted: w } of pairs) if (w.ref) ctx.refs.set(w.ref, current.id);
  for (const w of creates) if (w.ref) ctx.refs.set(w.ref, new Pending(w.key));
}

/** Stored rows keyed by `key` (rows without a key, made through the API, are left out). */
export const storedRows = <R extends { id: number }>(rows: R[], key: (r: R) => string | null) =>
  rows.flatMap((r) => {
    const k = key(r);
    return k === null ? [] : [{ id: r.id, key: k, values: r }];
  });
