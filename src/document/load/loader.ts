import type { Db } from '../../db/index.js';
import { describeValidation } from '../../validation.js';
import type { MediaStore, StagedObject } from '../../media/store.js';
import {
  checkCostReport,
  checkItem,
  checkProduction,
  declareItem,
  expect,
  fail,
  type Path,
  type RefInfo,
  type RefKind,
  type RefScope,
} from '../check-items.js';
import type { Section } from '../check.js';
import { DocumentError } from '../parse.js';
import type { ProductionDocument } from '../schema.js';
import { emptyCounts, PLAN_KINDS, type Plan, type PlanKind } from '../sync/plan.js';
import type { RowContext } from '../tables/row-context.js';
import { insertReturningIds, insertRows } from '../sync/write.js';
import { RefTable } from './ref-table.js';
import { itemValidator } from './validate.js';
import { SECTION_LOADERS, type Ready } from './sections.js';
import { LoadMedia } from './media.js';

/*
 * The first import of a production: the document's objects arrive one at a time (from a parsed
 * document, or streamed from a file of any size) and are written in batches, so memory holds a
 * batch and the refs, never the document. Every object is checked as it arrives; a reference to
 * an object further on waits (edges, the current episode) and is settled at the end, as is an
 * object whose references name objects not written yet (sections out of the format's order).
 * Any refusal throws, and the caller's transaction writes nothing.
 */

/** A reference to a ref not declared (or not written) yet: the object waits for it. */
export class NotYet extends Error {
  constructor(
    readonly ref: string,
    readonly path: Path | null,
  ) {
    super(`"${ref}" is not there yet`);
  }
}

export interface LoadOptions {
  store: MediaStore;
  /** Media paths in the document are relative to this folder. */
  baseDir: string;
  /** Count what would be written, writing nothing (a plan). */
  dryRun?: boolean;
}

const BATCH = 500;

type Production = ProductionDocument['production'];

interface Waiting {
  section: Section;
  item: unknown;
  i: number;
}

export class Loader implements RowContext, RefScope {
  readonly refs = new RefTable();
  readonly counts: Partial<Record<PlanKind, ReturnType<typeof emptyCounts>>> = {};
  readonly personNames = new Map<string, string>();
  readonly sceneEpisodes = new Map<string, string | null>();
  readonly media: LoadMedia;
  productionId = 0;
  production: Production | null = null;
  private fakeIds = 0;
  private batch: Ready[] = [];
  private batchSection: Section | null = null;
  private readonly waiting: Waiting[] = [];
  private readonly deferred: Array<{ ref: string; kinds: RefKind[]; path: Path }> = [];
  private readonly activeReports = { count: 0 };
  /** Edges wait for the end: a scene names assets listed after it, a character costumes after it. */
  readonly edges: Array<{ from: number; kind: string; to: string; position: number }> = [];
  readonly libraryPaths = new Set<string>();
  private episodeCount = 0;

  constructor(
    readonly db: Db,
    readonly now: string,
    readonly options: LoadOptions,
  ) {
    this.media = new LoadMedia(this, options);
  }

  get dryRun(): boolean {
    return this.options.dryRun ?? false;
  }

  // ---- RowContext: the ids of refs

  need(ref: string): number {
    const id = this.refs.idOf(ref);
    if (id === undefined) throw new NotYet(ref, null);
    return id;
  }

  id(ref: string | null | undefined): number | null {
    return ref === null || ref === undefined ? null : this.need(ref);
  }

  // ---- RefScope: declarations and checks as objects arrive

  declare(ref: string | undefined, info: RefInfo, path: Path): void {
    if (ref !== undefined) this.refs.declare(ref, info, path);
  }

  lookup(ref: string): RefInfo | undefined {
    return this.refs.info(ref);
  }

  missing(ref: string, path: Path): never {
    throw new NotYet(ref, path);
  }

  deferCheck(ref: string, kinds: RefKind[], path: Path): void {
    this.deferred.push({ ref, kinds, path });
  }

  // ---- counting what is created, as a first import's plan does

  created(kind: PlanKind, n = 1): void {
    (this.counts[kind] ??= emptyCounts()).created += n;
  }

  /** The kind's counts, there from now on even when nothing of the kind is created. */
  touch(kind: PlanKind): ReturnType<typeof emptyCounts> {
    return (this.counts[kind] ??= emptyCounts());
  }

  // ---- writing

  async insert<T extends Parameters<Db['insertInto']>[0]>(
    table: T,
    rows: readonly Parameters<typeof insertRows<T>>[2][number][],
  ): Promise<number[]> {
    if (this.dryRun) return this.madeUpIds(rows.length);
    return insertReturningIds(this.db, table, rows);
  }

  async insertOne<T extends Parameters<Db['insertInto']>[0]>(
    table: T,
    row: Parameters<typeof insertRows<T>>[2][number],
  ): Promise<number> {
    const [id] = await this.insert(table, [row]);
    if (id === undefined) throw new Error(`internal: no id came back for the ${table} row`);
    return id;
  }

  /** Ids for rows a plan counts but does not write (so later objects can refer to them). */
  madeUpIds(n: number): number[] {
    return Array.from({ length: n }, () => ++this.fakeIds);
  }

  async insertOnly<T extends Parameters<Db['insertInto']>[0]>(
    table: T,
    rows: readonly Parameters<typeof insertRows<T>>[2][number][],
  ): Promise<void> {
    if (!this.dryRun) await insertRows(this.db, table, rows);
  }

  // ---- the document, as it arrives

  async setProduction(p: Production): Promise<void> {
    this.production = p;
    const id = await SECTION_LOADERS.production(this, p);
    this.productionId = id;
  }

  /** One object of a section; written with the others of its batch. */
  async add(section: Section, item: unknown, i: number): Promise<void> {
    if (this.batchSection !== section) await this.flush();
    this.batchSection = section;
    itemValidator(section)(item, i);
    if (section === 'episodes') this.episodeCount++;
    declareItem(this, section, item, i);
    this.batch.push({ section, item, i });
    if (this.batch.length >= BATCH) await this.flush();
  }

  /** Writes the batch: objects whose references are all written go now, the others wait. */
  async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    const production = this.production;
    if (production === null) {
      for (const b of batch) this.waiting.push(b);
      return;
    }
    const ready: Ready[] = [];
    for (const b of batch) if (this.checks(b, production)) ready.push(b);
    if (ready.length) await this.write(ready);
  }

  private checks(b: Waiting, production: Production): boolean {
    try {
      if (b.section === 'cost_reports') checkCostReport(b.item as never, b.i, this.activeReports);
      else checkItem(this.scopeForChecks(), { production }, b.section, b.item, b.i);
      return true;
    } catch (err) {
      if (!(err instanceof NotYet)) throw err;
      this.waiting.push(b);
      return false;
    }
  }

  /** Checks see the refs declared so far; edges and the current episode are checked at the end. */
  private scopeForChecks(): RefScope {
    return {
      declare: () => undefined,
      lookup: (ref) => this.lookup(ref),
      missing: (ref, path) => this.missing(ref, path),
      later: (ref, kinds, path) => this.deferCheck(ref, kinds, path),
    };
  }

  private async write(ready: Ready[]): Promise<void> {
    const [first] = ready;
    if (!first) return;
    try {
      await SECTION_LOADERS[first.section](this, ready);
    } catch (err) {
      if (!(err instanceof NotYet)) throw err;
      // an object named something not written yet (a waiting one): write them one by one
      for (const r of ready) await this.writeOrWait(r);
    }
  }

  private async writeOrWait(r: Ready): Promise<void> {
    try {
      await SECTION_LOADERS[r.section](this, [r]);
    } catch (err) {
      if (!(err instanceof NotYet)) throw err;
      this.waiting.push(r);
    }
  }

  /** After the last object: what waited, the checks left for the end, the edges. */
  async finish(): Promise<Plan> {
    await this.flush();
    const production = this.production ?? fail(['production'], 'is required');
    if (this.waiting.length) await this.settleWaiting(production);
    checkProduction(this.finalScope(), production, this.episodeCount);
    for (const l of this.deferred) expect(this.finalScope(), l.ref, l.kinds, l.path);
    await SECTION_LOADERS.edges(this);
    await SECTION_LOADERS.currentEpisode(this, production);
    for (const kind of ['media', 'activity', 'library'] as const) this.touch(kind);
    const counts: Plan['counts'] = {};
    for (const k of PLAN_KINDS) if (this.counts[k]) counts[k] = this.counts[k];
    return {
      production: { code: production.code, id: this.dryRun ? null : this.productionId, created: true },
      counts,
      changes: [],
    };
  }

  private finalScope(): RefScope {
    return {
      declare: () => undefined,
      lookup: (ref) => this.lookup(ref),
      missing: (ref, path) => fail(path, `no object in the document has the ref "${ref}"`),
    };
  }

  /** Objects that waited, in rounds until none can go: then the first says what it lacks. */
  private async settleWaiting(production: Production): Promise<void> {
    for (;;) {
      const round = this.waiting.splice(0);
      let progressed = false;
      for (const w of round) {
        const before = this.waiting.length;
        if (this.checks(w, production)) await this.writeOrWait(w);
        if (this.waiting.length === before) progressed = true;
      }
      const [first] = this.waiting;
      if (!first) return;
      if (progressed) continue;
      // run its checks once more against the whole document: a missing ref is now an error
      checkItem(this.finalScope(), { production }, first.section, first.item, first.i);
      throw new DocumentError(`${first.section}[${first.i}]: refers to objects that refer back to it`);
    }
  }

  /** Staged media files to commit once the import commits. */
  staged(): StagedObject[] {
    return this.media.staged();
  }

  validationError(errors: Parameters<typeof describeValidation>[0]): never {
    throw new DocumentError(describeValidation(errors, 'document'));
  }
}
