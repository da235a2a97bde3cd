import { EDGE_USES, EDGE_WEARS } from '../../domain/vocabulary.js';
import type { Section } from '../check.js';
import type { DocApproval, ProductionDocument } from '../schema.js';
import { approvalRow, departmentNoteRow, stepsOf } from '../tables/approvals.js';
import { accountsOf, departmentRow } from '../tables/departments.js';
import { episodeRow } from '../tables/episodes.js';
import { productionRow } from '../tables/production.js';
import { organisationRow } from '../tables/organisations.js';
import { personRow } from '../tables/people.js';
import { activityRow, jobRow, libraryRow, scriptChangeRow } from '../tables/feed.js';
import { assetRow, sceneRow, type DocAsset, type DocScene } from '../tables/graph.js';
import { costReportRow, linesOf, purchaseOrderRow } from '../tables/money.js';
import { POSITION_GAP } from '../tables/row-context.js';
import { shootDayRow } from '../tables/schedule.js';
import { deliveryRow } from '../tables/deliveries.js';
import { engagementRow, grantRow } from '../tables/engagements.js';
import { labelOf, submissionRow } from '../tables/turnovers.js';
import { ingredientRow, notesOf, versionRow } from '../tables/versions.js';
import type { Loader } from './loader.js';
import type { MediaUse, OwnFile } from './media.js';
import { zip } from '../../util/zip.js';

/*
 * How a first import writes each section: rows built from a batch of checked objects (every
 * reference resolved first, so an object that must wait has written nothing), then inserted
 * parents first, children with their parents' ids.
 */

export interface Ready {
  section: Section;
  item: unknown;
  i: number;
}

type Doc = Required<ProductionDocument>;
type Load = (L: Loader, ready: Ready[]) => Promise<void>;
const items = <T>(ready: Ready[]) => ready.map((r) => ({ item: r.item as T, i: r.i }));
const position = (i: number) => i * POSITION_GAP;

/** Inserts one row per object and gives each object's ref its id. */
async function simple<T extends { ref?: string }>(
  L: Loader,
  ready: Ready[],
  table: Parameters<Loader['insert']>[0],
  kind: Parameters<Loader['created']>[0],
  row: (item: T, i: number) => object,
): Promise<number[]> {
  const list = items<T>(ready);
  const rows = list.map(({ item, i }) => row(item, i));
  const ids = await L.insert(table, rows);
  for (const [{ item }, id] of zip(list, ids)) if (item.ref !== undefined) L.refs.setId(item.ref, id);
  L.created(kind, rows.length);
  return ids;
}

const departments: Load = async (L, ready) => {
  const list = items<Doc['departments'][number]>(ready);
  const ids = await L.insert(
    'departments',
    list.map(({ item, i }) => departmentRow(item, position(i), L)),
  );
  const written = zip(list, ids);
  for (const [{ item }, id] of written) L.refs.setId(item.slug, id);
  L.created('departments', list.length);
  await L.insertOnly(
    'department_accounts',
    written.flatMap(([{ item }, id]) =>
      accountsOf(item).map((account) => ({ production_id: L.productionId, department_id: id, account })),
    ),
  );
};

const scenes: Load = async (L, ready) => {
  const list = items<DocScene>(ready);
  const ids = await simple<DocScene>(L, ready, 'nodes', 'scenes', (s, i) => sceneRow(s, position(i), L));
  for (const [{ item }, from] of zip(list, ids)) {
    L.sceneEpisodes.set(item.ref, item.episode ?? null);
    for (const [j, to] of (item.assets ?? []).entries())
      L.edges.push({ from, kind: EDGE_USES, to, position: j });
  }
};

/** Assets with their versions, the versions' media and ingredients, and the notes an export carries. */
const assets: Load = async (L, ready) => {
  const list = items<DocAsset>(ready);
  const name = (ref: string) => L.personNames.get(ref);
  // every reference first: an asset whose versions name a person not written yet waits whole
  const versionsOf = list.map(({ item: a, i }) =>
    (a.versions ?? []).map((v, j) => ({ a, i, j, v, row: versionRow(v, 0, null, name, L) })),
  );
  const nodes = await simple<DocAsset>(L, ready, 'nodes', 'assets', (a, i) => assetRow(a, position(i), L));
  for (const [{ item }, from] of zip(list, nodes)) {
    for (const [j, to] of (item.costumes ?? []).entries())
      L.edges.push({ from, kind: EDGE_WEARS, to, position: j });
  }
  // media in document order: a version's still, then its ingredients' swatches
  const uses: MediaUse[] = [];
  const use = (rel: string | null | undefined, u: Omit<MediaUse, 'rel'>): number =>
    rel ? uses.push({ rel, ...u }) - 1 : -1;
  const versions = zip(versionsOf, nodes).flatMap(([ofAsset, node]) =>
    ofAsset.map(({ a, i, j, v, row }) => {
      const path = ['assets', i, 'versions', j];
      return {
        v,
        row: { ...row, node_id: node },
        still: use(v.media, { path: [...path, 'media'], label: `${a.label} v${v.version}`, node }),
        swatches: (v.ingredients ?? []).map((g, k) =>
          use(g.media, { path: [...path, 'ingredients', k, 'media'], label: g.label, node }),
        ),
      };
    }),
  );
  const mediaIds = await L.media.idsOf(uses);
  const mediaAt = (slot: number) => (slot < 0 ? null : (mediaIds[slot] ?? null));
  const ids = await L.insert(
    'versions',
    versions.map(({ row, still }) => ({ ...row, media_id: mediaAt(still) })),
  );
  L.created('versions', versions.length);
  const written = zip(versions, ids).map(([{ v, swatches }, id]) => ({
    v,
    id,
    swatches: swatches.map(mediaAt),
  }));
  for (const { v, id } of written) if (v.ref !== undefined) L.refs.setId(v.ref, id);
  await ingredientsAndNotes(L, written);
};

/** The ingredients and notes of versions just written (`swatches`: each ingredient's media id). */
async function ingredientsAndNotes(
  L: Loader,
  versions: Array<{
    v: NonNullable<DocAsset['versions']>[number];
    id: number;
    swatches: Array<number | null>;
  }>,
): Promise<void> {
  const ingredients = versions.flatMap(({ v, id, swatches }) =>
    zip(v.ingredients ?? [], swatches).map(([g, media], k) => ({
      g,
      row: ingredientRow(g, k, id, media, L),
    })),
  );
  const ingredientIds = await L.insert(
    'ingredients',
    ingredients.map((x) => x.row),
  );
  for (const [{ g }, id] of zip(ingredients, ingredientIds)) if (g.ref !== undefined) L.refs.setId(g.ref, id);
  L.created('ingredients', ingredients.length);
  await L.insertOnly(
    'version_notes',
    versions.flatMap(({ v, id }) =>
      notesOf(v).map((note) => ({ production_id: L.productionId, version_id: id, ...note })),
    ),
  );
}

const shootDays: Load = async (L, ready) => {
  const list = items<Doc['shoot_days'][number]>(ready);
  const strips = list.map(({ item }) => (item.scenes ?? []).map((s) => L.need(s)));
  const ids = await simple(L, ready, 'shoot_days', 'shoot_days', (d: Doc['shoot_days'][number]) =>
    shootDayRow(d, L),
  );
  await L.insertOnly(
    'shoot_strips',
    zip(strips, ids).flatMap(([scenes, id]) =>
      scenes.map((scene, position) => ({
        production_id: L.productionId,
        shoot_day_id: id,
        scene_node_id: scene,
        position,
      })),
    ),
  );
};

const approvals: Load = async (L, ready) => {
  const list = items<DocApproval>(ready);
  const steps = list.map(({ item }) => stepsOf(item, (ref) => L.personNames.get(ref), L));
  const ids = await simple(L, ready, 'approvals', 'approvals', (a: DocApproval) => approvalRow(a, L));
  await L.insertOnly(
    'approval_steps',
    zip(steps, ids).flatMap(([chain, id]) =>
      chain.map((s, position) => ({
        production_id: L.productionId,
        approval_id: id,
        position,
        person_id: s.person_id as number,
        decision: s.decision,
        decided_by: s.decided_by,
        note: s.note,
        decided_at: s.decided_at,
      })),
    ),
  );
};

/** Deliveries, then the files of their packages. */
const deliveries: Load = async (L, ready) => {
  const list = items<Doc['deliveries'][number]>(ready);
  const ids = await simple(L, ready, 'deliveries', 'deliveries', (d: Doc['deliveries'][number], i) =>
    deliveryRow(d, position(i), L),
  );
  const files = zip(list, ids).flatMap(([{ item, i }, id]): OwnFile[] =>
    (item.files ?? []).map((f, j) => ({
      rel: f.media,
      path: ['deliveries', i, 'files', j, 'media'],
      label: labelOf(f),
      owner: { packageOf: id },
      createdBy: null,
      at: L.now,
    })),
  );
  if (files.length === 0) return;
  await L.media.own(files);
  L.created('package_files', files.length);
};

/** Submissions, then their files. */
const submissions: Load = async (L, ready) => {
  const list = items<Doc['submissions'][number]>(ready);
  const name = (ref: string) => L.personNames.get(ref);
  // every reference resolved before anything is written (a submission may have to wait)
  for (const { item } of list) {
    L.need(item.delivery);
    L.need(item.engagement);
    // a reviewer named by a person's ref waits for the person (free text does not)
    const by = item.review?.reviewed_by;
    if (by && L.lookup(by)?.kind === 'person') L.need(by);
  }
  const rows = list.map(({ item }) => submissionRow(item, name, L));
  const ids = await L.insert('work_items', rows);
  L.created('submissions', rows.length);
  const files = zip(zip(list, rows), ids).flatMap(([[{ item, i }, row], id]): OwnFile[] =>
    (item.files ?? []).map((f, j) => ({
      rel: f.media,
      path: ['submissions', i, 'files', j, 'media'],
      label: labelOf(f),
      owner: { deliveryId: row.delivery_id, workItemId: id, uploaderEngagementId: row.engagement_id },
      createdBy: row.created_by,
      at: row.created_at,
    })),
  );
  if (files.length === 0) return;
  await L.media.own(files);
  L.created('media', files.length);
};

const engagements: Load = async (L, ready) => {
  const list = items<Doc['engagements'][number]>(ready);
  const departmentsOf = list.map(({ item }) => [...new Set(item.departments ?? [])].map((d) => L.need(d)));
  // every reference resolved before anything is written (an engagement may have to wait)
  for (const { item } of list) {
    L.need(item.organisation);
    for (const g of item.grants ?? []) {
      L.id(g.node);
      L.id(g.delivery);
    }
  }
  const ids = await simple(L, ready, 'engagements', 'engagements', (e: Doc['engagements'][number]) =>
    engagementRow(e, L),
  );
  await L.insertOnly(
    'engagement_departments',
    zip(departmentsOf, ids).flatMap(([depts, id]) =>
      depts.map((d) => ({ engagement_id: id, department_id: d })),
    ),
  );
  const rows = list.flatMap(({ item }) => (item.grants ?? []).map((g) => grantRow(item, g, undefined, L)));
  await L.insert('grants', rows);
  L.created('grants', rows.length);
};

const costReports: Load = async (L, ready) => {
  const list = items<Doc['cost_reports'][number]>(ready);
  const ids = await L.insert(
    'cost_reports',
    list.map(({ item }) => costReportRow(item, L)),
  );
  L.created('cost_reports', list.length);
  await L.insertOnly(
    'cost_report_lines',
    zip(list, ids).flatMap(([{ item }, id]) =>
      linesOf(item).map((l, position) => ({
        production_id: L.productionId,
        cost_report_id: id,
        ...l,
        position,
      })),
    ),
  );
};

const activity: Load = async (L, ready) => {
  const rows = items<Doc['activity'][number]>(ready).map(({ item }) => activityRow(item, L));
  await L.insertOnly('activity', rows);
  L.created('activity', rows.length);
};

/** A path the document lists twice is one library file (the second counts as already there). */
const library: Load = async (L, ready) => {
  const rows = [];
  for (const { item } of items<Doc['library'][number]>(ready)) {
    if (L.libraryPaths.has(item.path)) {
      L.touch('library').unchanged++;
      continue;
    }
    L.libraryPaths.add(item.path);
    rows.push(libraryRow(item, L.productionId));
  }
  await L.insertOnly('library_files', rows);
  L.created('library', rows.length);
};

export const SECTION_LOADERS: Record<Section, Load> & {
  production: (L: Loader, p: ProductionDocument['production']) => Promise<number>;
  edges: (L: Loader) => Promise<void>;
  currentEpisode: (L: Loader, p: ProductionDocument['production']) => Promise<void>;
} = {
  async production(L, p) {
    const id = await L.insertOne('productions', { ...productionRow(p), created_at: L.now });
    L.created('production');
    return id;
  },
  episodes: async (L, ready) => {
    await simple(L, ready, 'episodes', 'episodes', (e: Doc['episodes'][number], i) =>
      episodeRow(e, position(i), L),
    );
  },
  organisations: async (L, ready) => {
    await simple(L, ready, 'organisations', 'organisations', (o: Doc['organisations'][number]) =>
      organisationRow(o, L),
    );
  },
  departments,
  people: async (L, ready) => {
    await simple(L, ready, 'people', 'people', (x: Doc['people'][number], i) => personRow(x, position(i), L));
    for (const { item } of items<Doc['people'][number]>(ready)) L.personNames.set(item.ref, item.name);
  },
  scenes,
  assets,
  shoot_days: shootDays,
  approvals,
  department_notes: async (L, ready) => {
    await simple(L, ready, 'department_notes', 'department_notes', (n: Doc['department_notes'][number]) =>
      departmentNoteRow(n, L),
    );
  },
  deliveries,
  engagements,
  submissions,
  purchase_orders: async (L, ready) => {
    await simple(L, ready, 'purchase_orders', 'purchase_orders', (o: Doc['purchase_orders'][number]) =>
      purchaseOrderRow(o, L),
    );
  },
  cost_reports: costReports,
  script_changes: async (L, ready) => {
    await simple(L, ready, 'script_changes', 'script_changes', (c: Doc['script_changes'][number]) =>
      scriptChangeRow(c, L.sceneEpisodes.get(c.scene), L),
    );
  },
  activity,
  jobs: async (L, ready) => {
    await simple(L, ready, 'generation_jobs', 'jobs', (j: Doc['jobs'][number]) => jobRow(j, L));
  },
  library,
  async edges(L) {
    const rows = L.edges.map((e) => ({
      production_id: L.productionId,
      from_node_id: e.from,
      to_node_id: L.need(e.to),
      kind: e.kind as typeof EDGE_USES | typeof EDGE_WEARS,
      position: e.position,
    }));
    for (let i = 0; i < rows.length; i += 5000) await L.insertOnly('edges', rows.slice(i, i + 5000));
  },
  async currentEpisode(L, p) {
    const current = p.current_episode ? L.need(p.current_episode) : null;
    if (current === null || L.dryRun) return;
    await L.db
      .updateTable('productions')
      .set({ current_episode_id: current })
      .where('id', '=', L.productionId)
      .execute();
  },
};
