import { Rng } from './random.js';

/**
 * How big each part of a generated production is at a given scale, and where every object sits.
 * At scale 1 it is an episodic season the size of a real show: 3,000 scenes, 30,000 assets,
 * about 300,000 versions. Smaller scales shrink every count in proportion (each kind keeps at
 * least a few rows, so a tiny document still exercises every table).
 */

/** Rows at scale 1. */
export const SCALE_ONE = {
  episodes: 20,
  organisations: 60,
  people: 800,
  scenes: 3_000,
  characters: 2_000,
  locations: 3_000,
  sets: 2_000,
  props: 12_000,
  vehicles: 1_000,
  others: 4_000,
  shootDays: 400,
  approvals: 5_000,
  departmentNotes: 5_000,
  deliveries: 2_000,
  engagements: 50,
  purchaseOrders: 20_000,
  costReports: 26,
  scriptChanges: 3_000,
  activity: 100_000,
  jobs: 2_000,
  library: 200_000,
} as const;

/** Costumes per character (each costume is worn by exactly one character). */
export const COSTUMES_PER_CHARACTER = 3;
export const STRIPS_PER_DAY = 15;
/** Versions per asset are drawn from 1..MAX_VERSIONS (mean about 10). */
export const MAX_VERSIONS = 19;
export const RELEASED_SHARE = 0.2;

/** Asset kinds in the order they are laid out in `assets`. */
export const ASSET_KINDS = ['character', 'costume', 'location', 'set', 'prop', 'vehicle', 'other'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

export interface Plan {
  scale: number;
  seed: number;
  counts: { -readonly [K in keyof typeof SCALE_ONE]: number } & { costumes: number; assets: number };
  /** First asset index of each kind; kind k spans [start[k], start[k] + count). */
  start: Record<AssetKind, number>;
  size: Record<AssetKind, number>;
  /** Versions of each asset, drawn once so every section agrees on them. */
  versionCounts: Uint8Array;
}

const MINIMUM: Partial<Record<keyof typeof SCALE_ONE, number>> = {
  episodes: 2,
  organisations: 3,
  people: 12,
  scenes: 4,
  characters: 2,
  locations: 2,
  sets: 1,
  props: 3,
  vehicles: 1,
  others: 2,
  shootDays: 2,
  engagements: 2,
  costReports: 2,
};

export function makePlan(scale: number, seed: number): Plan {
  const base = Object.fromEntries(
    Object.entries(SCALE_ONE).map(([k, v]) => [
      k,
      Math.max(MINIMUM[k as keyof typeof SCALE_ONE] ?? 1, Math.round(v * scale)),
    ]),
  ) as { -readonly [K in keyof typeof SCALE_ONE]: number };
  // every vendor engagement has an organisation of its own, plus a few that are not vendors
  base.organisations = Math.max(base.organisations, base.engagements + 2);
  const size: Record<AssetKind, number> = {
    character: base.characters,
    costume: base.characters * COSTUMES_PER_CHARACTER,
    location: base.locations,
    set: base.sets,
    prop: base.props,
    vehicle: base.vehicles,
    other: base.others,
  };
  const start = {} as Record<AssetKind, number>;
  let at = 0;
  for (const kind of ASSET_KINDS) {
    start[kind] = at;
    at += size[kind];
  }
  const rng = Rng.of(seed, 0);
  const versionCounts = new Uint8Array(at);
  for (let i = 0; i < at; i++) versionCounts[i] = rng.int(1, MAX_VERSIONS);
  return {
    scale,
    seed,
    counts: { ...base, costumes: size.costume, assets: at },
    start,
    size,
    versionCounts,
  };
}

export function kindOf(plan: Plan, asset: number): AssetKind {
  for (const kind of [...ASSET_KINDS].reverse()) if (asset >= plan.start[kind]) return kind;
  return 'character';
}

/** How many versions the plan gives the asset at global index `asset`. */
export function versionCountOf(plan: Plan, asset: number): number {
  const n = plan.versionCounts[asset];
  if (n === undefined) throw new Error(`internal: asset ${asset} is beyond the plan`);
  return n;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Document refs: short, unique, derived from positions so any section can name any object. */
export const ref = {
  episode: (i: number) => `ep${pad(i + 1, 2)}`,
  organisation: (i: number) => `o${pad(i + 1, 3)}`,
  person: (i: number) => `p${pad(i + 1, 4)}`,
  scene: (i: number) => `s${pad(i + 1, 5)}`,
  asset: (i: number) => `a${pad(i + 1, 5)}`,
  version: (asset: number, n: number) => `a${pad(asset + 1, 5)}v${n}`,
  day: (i: number) => `day${pad(i + 1, 3)}`,
  approval: (i: number) => `ap${pad(i + 1, 5)}`,
  note: (i: number) => `n${pad(i + 1, 5)}`,
  delivery: (i: number) => `d${pad(i + 1, 4)}`,
  engagement: (i: number) => `e${pad(i + 1, 3)}`,
  purchaseOrder: (i: number) => `po${pad(i + 1, 5)}`,
  scriptChange: (i: number) => `sc${pad(i + 1, 5)}`,
  job: (i: number) => `j${pad(i + 1, 5)}`,
};

/** The episode a scene belongs to: scenes are laid out episode by episode, in script order. */
export const episodeOfScene = (plan: Plan, scene: number): number =>
  Math.min(plan.counts.episodes - 1, Math.floor((scene * plan.counts.episodes) / plan.counts.scenes));

/** Scenes [from, to) of one episode. */
export function scenesOfEpisode(plan: Plan, episode: number): [number, number] {
  const { scenes, episodes } = plan.counts;
  const from = Math.ceil((episode * scenes) / episodes);
  const to = episode === episodes - 1 ? scenes : Math.ceil(((episode + 1) * scenes) / episodes);
  return [from, Math.max(from + 1, to)];
}

const DAY_MS = 86_400_000;
/** The season's calendar starts here; every date and time is an offset from it (no clock read). */
export const SEASON_START = Date.UTC(2026, 0, 5);

export const dateAt = (days: number): string =>
  new Date(SEASON_START + days * DAY_MS).toISOString().slice(0, 10);
export const timeAt = (minutes: number): string =>
  new Date(SEASON_START + minutes * 60_000).toISOString().replace('.000Z', 'Z');
