import type { Db } from '../../db/index.js';
import type { ProductionDocument } from '../schema.js';
import { Pending, type Id } from './cells.js';
import { zip } from '../../util/zip.js';
import { emptyCounts, PLAN_KINDS, type Action, type Change, type Plan, type PlanKind } from './plan.js';

export interface SyncOptions {
  /** An existing production is updated only when asked (`--replace`); a plan never writes. */
  replace: boolean;
  planOnly: boolean;
}

/**
 * What the section writers share during one sync: the document, the ref map (every ref of
 * the document to its id, or to a `Pending` for an object this sync creates), the plan being
 * built, and facts one section learns for another (what stays, what goes).
 */
export class SyncContext {
  readonly refs = new Map<string, Id>();
  readonly changes: Change[] = [];
  readonly counts: Partial<Record<PlanKind, ReturnType<typeof emptyCounts>>> = {};
  /** Set by the production section: the existing production's id, or a Pending for a new one. */
  productionId: Id = new Pending('production');
  productionExists = false;
  /**
   * Refs by which the document names objects the API made (an edited export does): the ref as
   * written → its canonical made-up form, so keys built from refs pair whichever form is used.
   */
  readonly apiMade = new Map<string, string>();

  constructor(
    readonly db: Db,
    readonly doc: ProductionDocument,
    readonly now: string,
    readonly options: SyncOptions,
  ) {}

  /** The production id for reading: null while the production does not exist yet (nothing to read). */
  get existingProductionId(): number | null {
    return this.productionExists ? (this.productionId as number) : null;
  }

  /** The id of an object the document names (the document was checked: every ref resolves). */
  need(ref: string): Id {
    const id = this.refs.get(ref);
    if (id === undefined) throw new Error(`internal: ref "${ref}" used before its section ran`);
    return id;
  }

  /** The ref as stored rows are keyed by: the canonical form of a ref naming an API-made object. */
  canonical(ref: string): string {
    return this.apiMade.get(ref) ?? ref;
  }

  id(ref: string | null | undefined): Id | null {
    return ref === null || ref === undefined ? null : this.need(ref);
  }

  record(
    kind: PlanKind,
    action: Action,
    key: string,
    id: number | null,
    extra: Omit<Change, 'kind' | 'action' | 'key' | 'id'> = {},
  ): void {
    this.countsOf(kind)[action]++;
    this.changes.push({ kind, action, key, id, ...extra });
  }

  unchanged(kind: PlanKind, n = 1): void {
    this.countsOf(kind).unchanged += n;
  }

  /** Makes the kind show in the plan even when nothing of it exists or changes. */
  countsOf(kind: PlanKind) {
    return (this.counts[kind] ??= emptyCounts());
  }

  plan(code: string): Plan {
    const order = (c: Change) => PLAN_KINDS.indexOf(c.kind);
    const changes = [...this.changes].sort((a, b) => order(a) - order(b));
    const counts: Plan['counts'] = {};
    for (const k of PLAN_KINDS) if (this.counts[k]) counts[k] = this.counts[k];
    const id = this.productionId instanceof Pending ? this.productionId.id : this.productionId;
    return { production: { code, id, created: !this.productionExists }, counts, changes };
  }
}

/** Gives repeated keys an occurrence suffix (`k`, `k#2`, …) in list order, so equal objects still pair up. */
export function occurrenceKeys<T>(items: readonly T[], keyOf: (item: T) => string): string[] {
  const seen = new Map<string, number>();
  return items.map((item) => {
    const k = keyOf(item);
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    return n === 1 ? k : `${k}#${n}`;
  });
}

/** Each item with its occurrence key (see occurrenceKeys), in list order. */
export const withOccurrenceKeys = <T>(items: readonly T[], keyOf: (item: T) => string): Array<[T, string]> =>
  zip(items, occurrenceKeys(items, keyOf));

export interface Matched<C, W> {
  current: C;
  wanted: W;
}

/** Pairs stored rows and wanted objects by key; the rest are to be created or are gone from the document. */
export function matchByKey<C extends { key: string }, W extends { key: string }>(
  current: readonly C[],
  wanted: readonly W[],
): { pairs: Matched<C, W>[]; creates: W[]; removed: C[] } {
  const byKey = new Map<string, C>();
  for (const c of current) if (!byKey.has(c.key)) byKey.set(c.key, c);
  const pairs: Matched<C, W>[] = [];
  const creates: W[] = [];
  const taken = new Set<C>();
  for (const w of wanted) {
    const c = byKey.get(w.key);
    if (c && !taken.has(c)) {
      taken.add(c);
      pairs.push({ current: c, wanted: w });
    } else creates.push(w);
  }
  return { pairs, creates, removed: current.filter((c) => !taken.has(c)) };
}
