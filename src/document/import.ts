import type { Db } from '../db/index.js';
import { refreshStatistics } from '../db/statistics.js';
import { nowIso } from '../db/values.js';
import { inWriteTransaction } from '../db/write-hooks.js';
import { commitStaged, type MediaStore, type StagedObject } from '../media/store.js';
import { appendActivity } from '../db/activity-log.js';
import { checkDocument } from './check.js';
import { documentSource, loadDocument } from './load/index.js';
import { planLoad } from './load/index.js';
import type { ProductionDocument } from './schema.js';
import { ApprovalsSection } from './sections/approvals.js';
import { DeliveriesSection } from './sections/deliveries.js';
import { DepartmentsSection } from './sections/departments.js';
import { EngagementsSection } from './sections/engagements.js';
import { EpisodesSection } from './sections/episodes.js';
import { FeedSection } from './sections/feed.js';
import { GraphSection } from './sections/graph.js';
import {
  MediaSection,
  readDocumentFiles,
  readTurnoverFiles,
  stageNewFiles,
  type DocumentFile,
} from './sections/media.js';
import { MoneySection } from './sections/money.js';
import { OrganisationsSection } from './sections/organisations.js';
import { PackageSection } from './sections/package.js';
import { PeopleSection } from './sections/people.js';
import { ProductionSection } from './sections/production.js';
import { ScheduleSection } from './sections/schedule.js';
import { SubmissionsSection } from './sections/submissions.js';
import { TurnoverFiles } from './sections/turnover-files.js';
import { VersionsSection } from './sections/versions.js';
import { idOf } from './sync/cells.js';
import { changesOfPlan } from './sync/changes.js';
import { SyncContext } from './sync/context.js';
import { summarise, type Plan } from './sync/plan.js';

/*
 * Import is a sync by ref. The first import of a production creates it; importing it again
 * (`--replace`) updates it in place in one transaction: an object whose ref is known keeps
 * its id and takes the document's fields, a new ref is created, a ref that left the document
 * is retired, deleted or kept (see the sections), and nothing the API wrote is lost.
 *
 * One code path decides: every section compares the document with what is stored and the
 * result is a plan (`decide`). `--plan` prints it; the sync applies exactly it (`apply`) and
 * records its counts in one activity entry.
 */

export interface ImportOptions {
  store: MediaStore;
  /** Media paths in the document are relative to this folder. */
  baseDir: string;
  /** Update a production that exists (`--replace`); without it an existing code is refused. */
  replace?: boolean;
  /** Who the sync's activity entry names (the CLI passes the operating-system user). */
  actor?: string;
  /**
   * Refresh the planner's statistics after the commit (default true). Off only where a test
   * needs a database exactly as the rows landed, without statistics.
   */
  statistics?: boolean;
}

export interface ImportResult {
  production: { id: number; code: string };
  /** Every ref of the document to the id the API uses for it. */
  refs: Record<string, number>;
  plan: Plan;
}

/** What the import's transaction hands on once committed. */
interface Written {
  plan: Plan;
  orphaned: string[];
  refs: Record<string, number>;
  productionId: number;
  unused: StagedObject[];
}

class Sections {
  readonly production = new ProductionSection();
  readonly episodes = new EpisodesSection();
  readonly organisations = new OrganisationsSection();
  readonly departments = new DepartmentsSection();
  readonly people = new PeopleSection();
  readonly graph = new GraphSection();
  readonly media: MediaSection;
  readonly versions = new VersionsSection();
  readonly schedule = new ScheduleSection();
  readonly approvals = new ApprovalsSection();
  readonly deliveries = new DeliveriesSection();
  readonly package: PackageSection;
  readonly engagements = new EngagementsSection();
  readonly submissions: SubmissionsSection;
  readonly money = new MoneySection();
  readonly feed = new FeedSection();

  constructor(
    files: ReadonlyMap<string, DocumentFile>,
    staged: Map<string, StagedObject>,
    store: MediaStore,
    turnoverFiles: TurnoverFiles,
  ) {
    this.media = new MediaSection(files, staged, store);
    this.package = new PackageSection(turnoverFiles);
    this.submissions = new SubmissionsSection(turnoverFiles);
  }
}

/** Compares the document with the database; writes nothing. */
async function decide(ctx: SyncContext, s: Sections): Promise<void> {
  await s.production.diff(ctx);
  await s.episodes.diff(ctx);
  await s.organisations.diff(ctx);
  await s.departments.diff(ctx);
  await s.people.diff(ctx);
  await s.graph.diff(ctx);
  await s.media.diff(ctx);
  await s.versions.diff(ctx, s.media);
  await s.schedule.diff(ctx);
  await s.approvals.diff(ctx);
  // a delivery whose package changes is itself updated
  await s.package.diff(ctx);
  await s.deliveries.diff(ctx, s.package);
  await s.engagements.diff(ctx);
  await s.submissions.diff(ctx);
  await s.money.diff(ctx);
  await s.feed.diff(ctx);
  // What left the document: those that refer to others decide first, so each object knows
  // whether anything that stays still refers to it.
  s.feed.settle(ctx);
  s.money.settle(ctx);
  await s.engagements.settle(ctx);
  await s.deliveries.settle(ctx);
  s.approvals.settle(ctx);
  s.schedule.settle(ctx);
  await s.versions.settle(ctx, { graph: s.graph, approvals: s.approvals });
  await s.media.settle(ctx, { versions: s.versions });
  await s.graph.settle(ctx, { approvals: s.approvals });
  s.episodes.settle(ctx);
  await s.organisations.settle(ctx, s.engagements);
  await s.departments.settle(ctx, { engagements: s.engagements, approvals: s.approvals });
  await s.people.settle(ctx, { approvals: s.approvals, versions: s.versions });
  s.production.settle(ctx);
}

/** Writes the plan: creates and updates in dependency order, then retirements and deletions. */
async function apply(ctx: SyncContext, s: Sections): Promise<string[]> {
  await s.production.write(ctx);
  await s.episodes.write(ctx);
  await s.production.writeCurrentEpisode(ctx);
  await s.organisations.write(ctx);
  await s.departments.write(ctx);
  await s.people.write(ctx);
  await s.graph.write(ctx);
  await s.media.write(ctx);
  await s.versions.write(ctx);
  await s.schedule.write(ctx);
  await s.approvals.write(ctx);
  await s.deliveries.write(ctx);
  await s.package.write(ctx);
  await s.engagements.write(ctx);
  await s.submissions.write(ctx);
  await s.money.write(ctx);
  await s.feed.write(ctx);
  // after the writes, so no row that stays still points at what goes
  await s.feed.remove(ctx);
  await s.money.remove(ctx);
  await s.engagements.remove(ctx);
  await s.deliveries.remove(ctx);
  await s.approvals.remove(ctx);
  await s.schedule.remove(ctx);
  await s.versions.remove(ctx);
  await s.graph.remove(ctx);
  await s.people.remove(ctx);
  await s.departments.remove(ctx);
  await s.organisations.remove(ctx);
  await s.episodes.remove(ctx);
  return s.media.removeOrphans(ctx);
}

function refsOf(ctx: SyncContext): Record<string, number> {
  const refs: Record<string, number> = {};
  for (const [ref, id] of ctx.refs) refs[ref] = idOf(id);
  return refs;
}

const exists = async (db: Db, code: string) =>
  (await db.selectFrom('productions').where('code', '=', code).select('id').executeTakeFirst()) !== undefined;

/** What importing the document would do, object by object; changes nothing. */
export async function planDocument(db: Db, doc: ProductionDocument, options: ImportOptions): Promise<Plan> {
  checkDocument(doc);
  if (!(await exists(db, doc.production.code))) return planLoad(db, documentSource(doc), options);
  const files = await readDocumentFiles(doc, options.baseDir);
  const turnoverFiles = new TurnoverFiles(await readTurnoverFiles(doc, options.baseDir), options.store);
  return db.transaction().execute(async (trx) => {
    const ctx = new SyncContext(trx, doc, nowIso(), { replace: options.replace ?? false, planOnly: true });
    await decide(ctx, new Sections(files, new Map(), options.store, turnoverFiles));
    return ctx.plan(doc.production.code);
  });
}

export async function importDocument(
  db: Db,
  doc: ProductionDocument,
  options: ImportOptions,
): Promise<ImportResult> {
  checkDocument(doc);
  // a first import creates every object: it is loaded object by object, as a streamed file is
  if (!(await exists(db, doc.production.code))) {
    const loaded = await loadDocument(db, documentSource(doc), options);
    return { production: loaded.production, refs: loaded.refs(), plan: loaded.plan };
  }
  const files = await readDocumentFiles(doc, options.baseDir);
  const turnoverFiles = new TurnoverFiles(await readTurnoverFiles(doc, options.baseDir), options.store);
  const staged = new Map<string, StagedObject>();
  const actor = options.actor ?? 'prodgraph import';
  const out = await commitStaged(
    () => [...staged.values(), ...turnoverFiles.staged],
    async () => {
      await stageNewFiles(db, doc.production.code, files, options.store, staged);
      // the one write path; the production's id (new on a first import) is known once written
      return inWriteTransaction<Written>(
        db,
        (result) => ({ productionId: result.productionId, actor }),
        undefined,
        async (trx, changes) => {
          // the sync stamps its rows with the write's own start time: its changes happened then
          const ctx = new SyncContext(trx, doc, changes.at, {
            replace: options.replace ?? false,
            planOnly: false,
          });
          const s = new Sections(files, staged, options.store, turnoverFiles);
          await decide(ctx, s);
          const plan = ctx.plan(doc.production.code);
          const orphaned = await apply(ctx, s);
          const productionId = idOf(ctx.productionId);
          plan.production.id = productionId;
          if (ctx.productionExists) {
            await appendActivity(trx, {
              productionId,
              actor,
              verb: 'synced',
              summary: `production document: ${summarise(plan)}`,
              at: ctx.now,
            });
          }
          const refs = refsOf(ctx);
          changesOfPlan(changes, plan, productionId, refs);
          s.package.logCreated(changes);
          s.submissions.logCreated(changes);
          return { plan, orphaned, refs, productionId, unused: s.media.unused() };
        },
      );
    },
    (result) => result.unused,
  );
  await Promise.allSettled(out.orphaned.map((key) => options.store.delete(key)));
  // The data arrived in bulk: plan the first requests on statistics that describe it. The
  // import has committed; a failure here costs speed, never data, so it does not fail it.
  if (options.statistics !== false) await refreshStatistics(db).catch(() => undefined);
  return {
    production: { id: out.productionId, code: doc.production.code },
    refs: out.refs,
    plan: out.plan,
  };
}
