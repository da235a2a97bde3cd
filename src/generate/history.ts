import { DEPARTMENTS, VENDOR_DEPARTMENTS } from './departments.js';
import { MODELS, personName, PROMPTS, VERBS } from './names.js';
import { dateAt, episodeOfScene, ref, timeAt, type Plan } from './plan.js';
import { nth, Rng } from './random.js';
import type { Item, Tally } from './tally.js';

/** Money and history: purchase orders, cost reports, script changes, activity, jobs, the library. */

const departmentBySlug = new Map<string, (typeof DEPARTMENTS)[number]>(DEPARTMENTS.map((d) => [d.slug, d]));

/**
 * Purchase orders. One in fifty goes to engagement 0's organisation (the vendor the bench asks
 * as), most of the rest to the other vendors; one in ten is production-wide (no department).
 */
export function* purchaseOrders(plan: Plan, tally: Tally): Generator<Item<'purchase_orders'>> {
  const rng = Rng.of(plan.seed, 11);
  const { counts } = plan;
  for (let i = 0; i < counts.purchaseOrders; i++) {
    const vendor =
      i % 50 === 0
        ? 0
        : rng.chance(0.7)
          ? rng.int(0, counts.engagements - 1)
          : rng.int(counts.engagements, counts.organisations - 1);
    const department = rng.chance(0.9) ? (departmentBySlug.get(rng.pick(VENDOR_DEPARTMENTS)) ?? null) : null;
    tally.purchaseOrders++;
    yield {
      ref: ref.purchaseOrder(i),
      vendor: ref.organisation(vendor),
      department: department?.slug ?? null,
      account: department ? rng.pick(department.accounts) : '9000',
      description: `${department?.name ?? 'Production-wide'} order ${i + 1}`,
      amount: rng.int(10_000, 25_000_000) / 100,
      status: rng.weighted([
        ['open', 40],
        ['partial', 30],
        ['closed', 30],
      ] as const),
      date: dateAt(rng.int(-120, 180)),
    };
  }
}

/** Weekly cost reports, one line per account; the latest week is the active one. */
export function* costReports(plan: Plan, tally: Tally): Generator<Item<'cost_reports'>> {
  const rng = Rng.of(plan.seed, 12);
  const weeks = plan.counts.costReports;
  for (let w = 0; w < weeks; w++) {
    const lines = DEPARTMENTS.flatMap((d) =>
      d.accounts.map((account) => {
        const budget = rng.int(50, 5_000) * 1_000;
        const actual = Math.round((budget * (w + 1)) / (weeks + 4));
        return {
          account,
          description: d.name,
          budget,
          actual,
          committed: Math.round(actual * (rng.int(5, 40) / 100)),
        };
      }),
    );
    tally.costReports++;
    tally.costReportLines += lines.length;
    yield { week_of: dateAt(w * 7), active: w === weeks - 1, lines };
  }
}

export function* scriptChanges(plan: Plan, tally: Tally): Generator<Item<'script_changes'>> {
  const rng = Rng.of(plan.seed, 13);
  const { counts } = plan;
  for (let i = 0; i < counts.scriptChanges; i++) {
    const scene = rng.int(0, counts.scenes - 1);
    tally.scriptChanges++;
    yield {
      ref: ref.scriptChange(i),
      scene: ref.scene(scene),
      change: rng.weighted([
        ['modified', 70],
        ['added', 10],
        ['omitted', 10],
        ['removed', 10],
      ] as const),
      summary: `Draft ${1 + (i % 9)}: episode ${episodeOfScene(plan, scene) + 1} rewrite`,
      status: rng.weighted([
        ['pending', 30],
        ['approved', 55],
        ['dismissed', 15],
      ] as const),
      detected_at: timeAt(rng.int(0, 200_000)),
    };
  }
}

/** The activity history, oldest first, spread evenly over about five months. */
export function* activity(plan: Plan, tally: Tally): Generator<Item<'activity'>> {
  const rng = Rng.of(plan.seed, 14);
  const { counts } = plan;
  for (let i = 0; i < counts.activity; i++) {
    const roll = rng.int(0, 9);
    const node =
      roll < 5
        ? ref.asset(rng.int(0, counts.assets - 1))
        : roll < 7
          ? ref.scene(rng.int(0, counts.scenes - 1))
          : null;
    tally.activity++;
    yield {
      at: timeAt(Math.floor((i * 216_000) / counts.activity)),
      actor: personName(rng.int(0, counts.people - 1)),
      verb: rng.pick(VERBS),
      summary: node ? `${node} updated` : 'Schedule revised',
      ...(node ? { node } : {}),
    };
  }
}

export function* jobs(plan: Plan, tally: Tally): Generator<Item<'jobs'>> {
  const rng = Rng.of(plan.seed, 15);
  for (let i = 0; i < plan.counts.jobs; i++) {
    const status = rng.weighted([
      ['succeeded', 70],
      ['failed', 10],
      ['running', 5],
      ['queued', 15],
    ] as const);
    const created = rng.int(0, 200_000);
    const video = rng.chance(0.3);
    tally.jobs++;
    yield {
      ref: ref.job(i),
      kind: video ? 'video' : 'image',
      model: video ? 'video-standard' : rng.pick(MODELS.filter((m) => m.startsWith('image'))),
      prompt: rng.pick(PROMPTS),
      status,
      created_at: timeAt(created),
      finished_at: status === 'succeeded' || status === 'failed' ? timeAt(created + rng.int(1, 30)) : null,
    };
  }
}

const EXTENSIONS = ['exr', 'exr', 'exr', 'mov', 'wav', 'jpg'];

/** Files the storage agent has reported: one path per (asset, frame), so every path is distinct. */
export function* library(plan: Plan, tally: Tally): Generator<Item<'library'>> {
  const rng = Rng.of(plan.seed, 16);
  const { counts } = plan;
  for (let i = 0; i < counts.library; i++) {
    const asset = i % counts.assets;
    const frame = 1001 + Math.floor(i / counts.assets);
    const ext = nth(EXTENSIONS, asset);
    const episode = ref.episode(asset % counts.episodes);
    tally.library++;
    yield {
      path: `${episode}/${ref.asset(asset)}/v${String(1 + (frame % 7)).padStart(3, '0')}/${ref.asset(asset)}.${frame}.${ext}`,
      size: rng.int(200_000, 90_000_000),
      detected_at: timeAt(rng.int(0, 200_000)),
    };
  }
}
