import { EDGE_USES, EDGE_WEARS } from '../../domain/vocabulary.js';
import type { Section } from '../check.js';
import type { DocApproval, ProductionDocument } from '../schema.js';
import { approvalRow, departmentNoteRow, stepsOf } from '../tables/approvals.js';
import { accountsOf, departmentRow } from '../tables/departments.js';
import { episodeRow } from '../tables/episodes.js';
import { organisationRow } from '../tables/organisations.js';
import { personRow } from '../tables/people.js';
import { activityRow, jobRow, libraryRow, scriptChangeRow } from '../tables/feed.js';
import { assetRow, sceneRow, type DocAsset, type DocScene } from '../tables/graph.js';
import { costReportRow, linesOf, purchaseOrderRow } from '../tables/money.js';
import { POSITION_GAP } from '../tables/row-context.js';
import { shootDayRow } from '../tables/schedule.js';
import { deliveryRow } from '../tables/deliveries.js';
import { engagementRow, grantRow } from '../tables/engagements.js';
import { ingredientRow, notesOf, versionRow } from '../tables/versions.js';
import type { Loader } from './loader.js';
import type { MediaUse } from './media.js';

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
  list.forEach(({ item }, n) => item.ref !== undefined && L.refs.setId(item.ref, ids[n]!));
  L.created(kind, rows.length);
  return ids;
}

const departments: Load = async (L, ready) => {
  const list = items<Doc['departments'][number]>(ready);
  const ids = await L.insert(
    'departments',
    list.map(({ item, i }) => departmentRow(item, position(i), L)),
  );
  list.forEach(({ item }, n) => L.refs.setId(item.slug, ids[n]!));
  L.created('departments', list.length);
  await L.insertOnly(
    'department_accounts',
    list.flatMap(({ item }, n) =>
      accountsOf(item).map((account) => ({ production_id: L.productionId, department_id: ids[n]!, account })),
    ),
  );
};

const scenes: Load = async (L, ready) => {
  const list = items<DocScene>(ready);
  const ids = await simple<DocScene>(L, ready, 'nodes', 'scenes', (s, i) => sceneRow(s, position(i), L));
  list.forEach(({ item }, n) => {
    L.sceneEpisodes.set(item.ref, item.episode ?? null);
    (item.assets ?? []).forEach((to, j) => L.edges.push({ from: ids[n]!, kind: EDGE_USES, to, position: j }));
  });
};

/** Assets with their versions, the versions' media and ingredients, and the notes an export carries. */
const assets: Load = async (L, ready) => {
  const list = items<DocAsset>(ready);
  const name = (ref: string) => L.personNames.get(ref);
  // every reference first: an asset whose versions name a person not written yet waits whole
  const versions = list.flatMap(({ item: a, i }) =>
    (a.versions ?? []).map((v, j) => ({ a, i, j, v, row: versionRow(v, 0, null, name, L) })),
  );
  const nodes = await simple<DocAsset>(L, ready, 'nodes', 'assets', (a, i) => assetRow(a, position(i), L));
  const nodeOf = new Map(list.map(({ item }, n) => [item, nodes[n]!]));
  list.forEach(({ item }, n) =>
    (item.costumes ?? []).forEach((to, j) =>
      L.edges.push({ from: nodes[n]!, kind: EDGE_WEARS, to, position: j }),
    ),
  );
  // media in document order: a version's still, then its ingredients' swatches
  const uses: MediaUse[] = [];
  const use = (rel: string | null | undefined, u: Omit<MediaUse, 'rel'>): number =>
    rel ? uses.push({ rel, ...u }) - 1 : -1;
  const slots = versions.map(({ a, i, j, v }) => {
    const path = ['assets', i, 'versions', j];
    const node = nodeOf.get(a)!;
    return {
      still: use(v.media, { path: [...path, 'media'], label: `${a.label} v${v.version}`, node }),
      swatches: (v.ingredients ?? []).map((g, k) =>
        use(g.media, { path: [...path, 'ingredients', k, 'media'], label: g.label, node }),
      ),
    };
  });
  const mediaIds = await L.media.idsOf(uses);
  const mediaAt = (slot: number) => (slot < 0 ? null : mediaIds[slot]!);
  const ids = await L.insert(
    'versions',
    versions.map(({ a, row }, n) => ({
      ...row,
      node_id: nodeOf.get(a)!,
      media_id: mediaAt(slots[n]!.still),
    })),
  );
  L.created('versions', versions.length);
  versions.forEach(({ v }, n) => v.ref !== undefined && L.refs.setId(v.ref, ids[n]!));
  await ingredientsAndNotes(
    L,
    versions,
    ids,
    slots.map((s) => s.swatches.map(mediaAt)),
  );
};

async function ingredientsAndNotes(
  L: Loader,
  rows: Array<{ v: NonNullable<DocAsset['versions']>[number] }>,
  ids: number[],
  media: Array<Array<number | null>>,
): Promise<void> {
  const ingredients = rows.flatMap(({ v }, n) =>
    (v.ingredients ?? []).map((g, k) => ({ g, row: ingredientRow(g, k, ids[n]!, media[n]![k]!, L) })),
  );
  const ingredientIds = await L.insert(
    'ingredients',
    ingredients.map((x) => x.row),
  );
  ingredients.forEach(({ g }, n) => g.ref !== undefined && L.refs.setId(g.ref, ingredientIds[n]!));
  L.created('ingredients', ingredients.length);
  await L.insertOnly(
    'version_notes',
    rows.flatMap(({ v }, n) =>
      notesOf(v).map((note) => ({ production_id: L.productionId, version_id: ids[n]!, ...note })),
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
    strips.flatMap((scenes, n) =>
      scenes.map((scene, position) => ({
        production_id: L.productionId,
        shoot_day_id: ids[n]!,
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
    steps.flatMap((chain, n) =>
      chain.map((s, position) => ({
        production_id: L.productionId,
        approval_id: ids[n]!,
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
    departmentsOf.flatMap((depts, n) => depts.map((d) => ({ engagement_id: ids[n]!, department_id: d }))),
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
    list.flatMap(({ item }, n) =>
      linesOf(item).map((l, position) => ({
        production_id: L.productionId,
        cost_report_id: ids[n]!,
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
      L.touch('library');
      L.counts.library!.unchanged++;
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
    const [id] = await L.insert('productions', [
      {
        code: p.code,
        title: p.title,
        logline: p.logline ?? '',
        status: p.status ?? 'active',
        phase: p.phase ?? 'development',
        accent: p.accent ?? 'slate',
        format: p.format ?? 'single',
        season_number: p.format === 'episodic' ? (p.season_number ?? null) : null,
        filespace: p.filespace ?? null,
        created_at: L.now,
      },
    ]);
    L.created('production');
    return id!;
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
  deliveries: async (L, ready) => {
    await simple(L, ready, 'deliveries', 'deliveries', (d: Doc['deliveries'][number], i) =>
      deliveryRow(d, position(i), L),
    );
  },
  engagements,
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
