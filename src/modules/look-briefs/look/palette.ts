import { zip } from '../../../util/zip.js';
import { colourName, deltaE, hexOf, toLab, type Rgb } from './colour.js';

/**
 * Palette quantisation: median cut over a 15-bit colour histogram, refined by weighted k-means.
 * Clusters a viewer cannot tell apart (ΔE76 < 5) are merged; negligible ones (< 0.5 % of the
 * frame) lend their share to their nearest neighbour, whose colour stays as it is.
 * Deterministic: no random seeding anywhere, and every tie is broken by a fixed order.
 * Kept over image-q: its palettes differ on graded stills and it is far slower (bench/FINDINGS.md).
 */

export const MAX_COLOURS = 8;
const MIN_SHARE = 0.005;
const SAME_COLOUR = 5;
const KMEANS_ROUNDS = 16;

export interface PaletteEntry {
  hex: string;
  share: number;
  name: string;
}

interface Cluster {
  rgb: [number, number, number];
  weight: number;
}

interface Bins {
  rgb: Float64Array; // 3 per bin: the mean colour of the pixels that fell in it
  weight: Uint32Array;
  length: number;
}

/** Occupied bins of a 5-bits-per-channel histogram, each at the exact mean of its pixels. */
function histogram(pixels: Uint8Array): Bins {
  const count = new Uint32Array(1 << 15);
  const sums = new Float64Array(3 << 15);
  for (let i = 0; i < pixels.length; i += 3) {
    const r = pixels[i]!;
    const g = pixels[i + 1]!;
    const b = pixels[i + 2]!;
    const bin = ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3);
    count[bin]!++;
    sums[bin * 3]! += r;
    sums[bin * 3 + 1]! += g;
    sums[bin * 3 + 2]! += b;
  }
  let length = 0;
  for (const c of count) if (c > 0) length++;
  const rgb = new Float64Array(length * 3);
  const weight = new Uint32Array(length);
  let j = 0;
  for (let bin = 0; bin < count.length; bin++) {
    const c = count[bin]!;
    if (c === 0) continue;
    rgb[j * 3] = sums[bin * 3]! / c;
    rgb[j * 3 + 1] = sums[bin * 3 + 1]! / c;
    rgb[j * 3 + 2] = sums[bin * 3 + 2]! / c;
    weight[j] = c;
    j++;
  }
  return { rgb, weight, length };
}

interface Box {
  members: number[];
  weight: number;
  channel: number;
  range: number;
}

function boxOf(bins: Bins, members: number[]): Box {
  const lo = [255, 255, 255];
  const hi = [0, 0, 0];
  let weight = 0;
  for (const m of members) {
    weight += bins.weight[m]!;
    for (let c = 0; c < 3; c++) {
      const v = bins.rgb[m * 3 + c]!;
      if (v < lo[c]!) lo[c] = v;
      if (v > hi[c]!) hi[c] = v;
    }
  }
  let channel = 0;
  for (let c = 1; c < 3; c++) if (hi[c]! - lo[c]! > hi[channel]! - lo[channel]!) channel = c;
  return { members, weight, channel, range: hi[channel]! - lo[channel]! };
}

/** Splits the box at the weighted median of its widest channel; null when it cannot be split. */
function split(bins: Bins, box: Box): [Box, Box] | null {
  if (box.members.length < 2 || box.range === 0) return null;
  const c = box.channel;
  const sorted = [...box.members].sort((a, b) => bins.rgb[a * 3 + c]! - bins.rgb[b * 3 + c]! || a - b);
  let acc = 0;
  let cut = 1;
  for (let i = 0; i < sorted.length - 1; i++) {
    acc += bins.weight[sorted[i]!]!;
    cut = i + 1;
    if (acc * 2 >= box.weight) break;
  }
  return [boxOf(bins, sorted.slice(0, cut)), boxOf(bins, sorted.slice(cut))];
}

function medianCut(bins: Bins): Cluster[] {
  const all = Array.from({ length: bins.length }, (_, i) => i);
  const boxes = [boxOf(bins, all)];
  while (boxes.length < MAX_COLOURS) {
    // the box whose pixels are spread widest (weight × range) is split next
    let pick = -1;
    let score = 0;
    boxes.forEach((b, i) => {
      const s = b.members.length > 1 ? b.weight * b.range : 0;
      if (s > score) {
        score = s;
        pick = i;
      }
    });
    if (pick < 0) break;
    const halves = split(bins, boxes[pick]!);
    if (!halves) break;
    boxes.splice(pick, 1, ...halves);
  }
  return boxes.map((b) => centroid(bins, b.members));
}

function centroid(bins: Bins, members: readonly number[]): Cluster {
  const rgb: [number, number, number] = [0, 0, 0];
  let weight = 0;
  for (const m of members) {
    const w = bins.weight[m]!;
    weight += w;
    for (let c = 0; c < 3; c++) rgb[c]! += bins.rgb[m * 3 + c]! * w;
  }
  return { rgb: weight > 0 ? [rgb[0] / weight, rgb[1] / weight, rgb[2] / weight] : rgb, weight };
}

function nearest(clusters: readonly Cluster[], r: number, g: number, b: number): number {
  let best = 0;
  let bestDistance = Infinity;
  clusters.forEach((k, i) => {
    const d = (k.rgb[0] - r) ** 2 + (k.rgb[1] - g) ** 2 + (k.rgb[2] - b) ** 2;
    if (d < bestDistance) {
      bestDistance = d;
      best = i;
    }
  });
  return best;
}

function kMeans(bins: Bins, start: Cluster[]): Cluster[] {
  let clusters = start;
  let assignment = new Int32Array(bins.length).fill(-1);
  for (let round = 0; round < KMEANS_ROUNDS; round++) {
    const next = new Int32Array(bins.length);
    let changed = false;
    for (let i = 0; i < bins.length; i++) {
      next[i] = nearest(clusters, bins.rgb[i * 3]!, bins.rgb[i * 3 + 1]!, bins.rgb[i * 3 + 2]!);
      if (next[i] !== assignment[i]) changed = true;
    }
    assignment = next;
    if (!changed) break;
    const members: number[][] = clusters.map(() => []);
    for (let i = 0; i < bins.length; i++) members[assignment[i]!]!.push(i);
    clusters = members.filter((m) => m.length > 0).map((m) => centroid(bins, m));
    if (clusters.length !== members.length) assignment.fill(-1);
  }
  return clusters;
}

const merged = (a: Cluster, b: Cluster): Cluster => {
  const w = a.weight + b.weight;
  return {
    rgb: [0, 1, 2].map((c) => (a.rgb[c]! * a.weight + b.rgb[c]! * b.weight) / w) as Cluster['rgb'],
    weight: w,
  };
};

/** Folds away clusters a viewer would not tell apart, then ones too small to matter. */
function consolidate(input: Cluster[], total: number): Cluster[] {
  const clusters = [...input];
  for (;;) {
    if (clusters.length < 2) return clusters;
    const labs = clusters.map((k) => toLab(k.rgb));
    let pair: [number, number] | null = null;
    let closest = SAME_COLOUR;
    for (let i = 0; i < clusters.length; i++) {
      for (let j = i + 1; j < clusters.length; j++) {
        const d = deltaE(labs[i]!, labs[j]!);
        if (d < closest) {
          closest = d;
          pair = [i, j];
        }
      }
    }
    if (!pair) {
      let smallest = 0;
      clusters.forEach((k, i) => {
        if (k.weight < clusters[smallest]!.weight) smallest = i;
      });
      if (clusters[smallest]!.weight / total >= MIN_SHARE) return clusters;
      let into = -1;
      let distance = Infinity;
      clusters.forEach((_, i) => {
        if (i === smallest) return;
        const d = deltaE(labs[smallest]!, labs[i]!);
        if (d < distance) {
          distance = d;
          into = i;
        }
      });
      // a speck must not tint a real colour: only its share moves
      clusters[into] = {
        rgb: clusters[into]!.rgb,
        weight: clusters[into]!.weight + clusters[smallest]!.weight,
      };
      clusters.splice(smallest, 1);
      continue;
    }
    const [i, j] = pair;
    clusters[i] = merged(clusters[i]!, clusters[j]!);
    clusters.splice(j, 1);
  }
}

/** Shares rounded to 4 places that still add up to exactly 1 (largest remainder). */
function roundedShares(weights: readonly number[], total: number): number[] {
  const scaled = weights.map((w) => (w / total) * 10_000);
  const floors = scaled.map(Math.floor);
  let left = 10_000 - floors.reduce((a, b) => a + b, 0);
  const order = scaled
    .map((s, i) => [s - Math.floor(s), i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (left <= 0) break;
    floors[i]!++;
    left--;
  }
  return floors.map((f) => f / 10_000);
}

/** The palette of an sRGB pixel buffer (3 bytes a pixel), biggest share first. */
export function paletteOf(pixels: Uint8Array): PaletteEntry[] {
  const total = pixels.length / 3;
  if (total === 0) return [];
  const bins = histogram(pixels);
  const clusters = consolidate(kMeans(bins, medianCut(bins)), total);
  const rounded = clusters.map((k) => ({
    rgb: [Math.round(k.rgb[0]), Math.round(k.rgb[1]), Math.round(k.rgb[2])] satisfies Rgb,
    weight: k.weight,
  }));
  rounded.sort((a, b) => b.weight - a.weight || hexOf(a.rgb).localeCompare(hexOf(b.rgb)));
  const shares = roundedShares(
    rounded.map((k) => k.weight),
    total,
  );
  return zip(rounded, shares).map(([k, share]) => ({ hex: hexOf(k.rgb), share, name: colourName(k.rgb) }));
}
