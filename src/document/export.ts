import type { Db } from '../db/index.js';
import type { ProductionDocument } from './schema.js';
import { readMediaFiles } from './sections/media.js';
import { productionDoc, readProduction } from './sections/production.js';
import {
  approvalRefs,
  approvalsDoc,
  nameApprovals,
  readApprovals,
  subjectVersions,
} from './tables/approvals.js';
import { departmentsDoc, readDepartments } from './tables/departments.js';
import { deliveriesDoc, gatingApprovals, readDeliveries } from './tables/deliveries.js';
import { episodesDoc, readEpisodes } from './tables/episodes.js';
import { engagementRefs, engagementsDoc, readEngagements } from './tables/engagements.js';
import { ExportContext, type ExportedFile } from './tables/export-context.js';
import { feedDoc, feedRefs, readFeed } from './tables/feed.js';
import { graphDoc, graphRefs, nameGraph, readGraph } from './tables/graph.js';
import { moneyDoc, moneyRefs, readMoney } from './tables/money.js';
import { organisationsDoc, readOrganisations } from './tables/organisations.js';
import { peopleDoc, readPeople } from './tables/people.js';
import { readSchedule, scheduleDoc, scheduleRefs } from './tables/schedule.js';
import { packagesDoc, readTurnovers, submissionsDoc } from './tables/turnovers.js';
import { nameVersions, readVersions, versionRefs, versionsDoc } from './tables/versions.js';

/*
 * The production as a document in the import format, including what arrived through the API
 * as far as the format can express it: assets created through the API, landed versions with
 * their notes and media, decisions (as decided steps), grants made by an administrator,
 * activity. Importing it into an empty database gives the same answer on every read route,
 * ids aside — the way to back up a production and to move it between databases.
 *
 * The format cannot carry (and the export leaves out): retired objects (and the submissions
 * on a retired delivery or of a retired engagement); files taken out of a package; storage
 * events, tasks and library history (only live library paths); API keys and idempotency
 * records; who uploaded a media file and when (a submission's files take its author and time);
 * whether an engagement or grant came from the document or an administrator.
 *
 * Each table's file (under tables/) reads its rows and turns them back into document objects;
 * this one reads every section, names the objects the others refer to, and assembles the
 * document in its order. Queries: a fixed number (one to five per section), whatever the
 * production's size.
 */

export type { ExportedFile } from './tables/export-context.js';

export interface Exported {
  doc: ProductionDocument;
  files: ExportedFile[];
  /** Every exported ref to the id it has in this database (refs the export made up included). */
  refs: Record<string, number>;
}

/** Every section's stored rows, read side by side. */
async function readSections(db: Db, pid: number) {
  const [
    episodes,
    organisations,
    departments,
    people,
    graph,
    versions,
    media,
    schedule,
    approvals,
    deliveries,
    engagements,
    turnovers,
    money,
    feed,
  ] = await Promise.all([
    readEpisodes(db, pid),
    readOrganisations(db, pid),
    readDepartments(db, pid),
    readPeople(db, pid),
    readGraph(db, pid),
    readVersions(db, pid),
    readMediaFiles(db, pid),
    readSchedule(db, pid),
    readApprovals(db, pid),
    readDeliveries(db, pid),
    readEngagements(db, pid),
    readTurnovers(db, pid),
    readMoney(db, pid),
    readFeed(db, pid),
  ]);
  return {
    episodes,
    organisations,
    departments,
    people,
    graph,
    versions,
    media,
    schedule,
    approvals,
    deliveries,
    engagements,
    turnovers,
    money,
    feed,
  };
}

export async function exportDocument(db: Db, code: string): Promise<Exported | null> {
  const p = await readProduction(db, code);
  if (!p) return null;
  const s = await readSections(db, p.id);
  // a made-up ref is never one the production's rows already carry
  const taken = [
    ...[...s.episodes, ...s.organisations, ...s.people].map((r) => r.ref),
    ...s.departments.departments.map((d) => d.slug),
    ...graphRefs(s.graph),
    ...versionRefs(s.versions),
    ...scheduleRefs(s.schedule),
    ...approvalRefs(s.approvals),
    ...s.deliveries.map((d) => d.ref),
    ...engagementRefs(s.engagements),
    ...moneyRefs(s.money),
    ...feedRefs(s.feed),
  ].filter((ref): ref is string => !!ref);
  const ex = new ExportContext(p.format === 'episodic', taken, s.media);
  // the objects other sections refer to are named first
  ex.name(s.episodes, ex.episode, () => 'episode');
  ex.name(s.organisations, ex.organisation, () => 'org');
  for (const d of s.departments.departments) ex.department.set(d.id, d.slug);
  ex.name(s.people, ex.person, () => 'person');
  nameGraph(s.graph, ex);
  nameVersions(s.versions, subjectVersions(s.approvals), ex);
  nameApprovals(s.approvals, gatingApprovals(s.deliveries), ex);
  ex.name(s.deliveries, ex.delivery, () => 'delivery');
  ex.name(s.engagements.engagements, ex.engagement, () => 'engagement');
  const doc: ProductionDocument = {
    production: productionDoc(p, ex),
    ...episodesDoc(s.episodes, ex),
    ...organisationsDoc(s.organisations, ex),
    ...departmentsDoc(s.departments),
    ...peopleDoc(s.people, ex),
    ...graphDoc(s.graph, ex, versionsDoc(s.versions, ex)),
    ...scheduleDoc(s.schedule, ex),
    ...approvalsDoc(s.approvals, ex),
    ...deliveriesDoc(s.deliveries, packagesDoc(s.turnovers, ex), ex),
    ...engagementsDoc(s.engagements, ex),
    ...submissionsDoc(
      s.turnovers,
      (id) => ex.delivery.get(id),
      (id) => ex.engagement.get(id),
      ex,
    ),
    ...moneyDoc(s.money, ex),
    ...feedDoc(s.feed, ex),
  };
  return { doc, files: ex.exportedFiles(), refs: ex.refs };
}
