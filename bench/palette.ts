/*
 * The look brief's hand-written colour code against maintained libraries, same run, same pixels:
 *
 * - the palette (src/modules/look-briefs/look/palette.ts: median cut + k-means + consolidation)
 *   against image-q's quantisers (Wu, RGBQuant, NeuQuant; each pixel then mapped to its nearest
 *   palette colour by image-q to give the shares). Match: for each of our colours, the CIEDE2000
 *   distance to the library's nearest colour, and the share the library gives that colour.
 * - the colour maths (colour.ts: sRGB → CIELAB D65, HSV hue) against culori's converters, over
 *   a grid of sRGB colours: the largest difference, and the time per call.
 *
 * The stills are the ones test/vision-brief.test.ts writes plus a few generated ones, reduced
 * exactly as analyse.ts reduces them (≤256 px, nearest, flattened, sRGB bytes). Both libraries
 * were measured and not kept (bench/FINDINGS.md, "The look brief's palette and colour maths"),
 * so they are not dependencies: install them without saving before a run.
 *
 *   npm install --no-save image-q@4.0.0 culori@4.0.2
 *   node --import tsx bench/palette.ts [--reps 15] [--only palette|colour]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import sharp from 'sharp';
import { ANALYSIS_EDGE } from '../src/modules/look-briefs/look/analyse.js';
import { hueOf, toLab } from '../src/modules/look-briefs/look/colour.js';
import { MAX_COLOURS, paletteOf, type PaletteEntry } from '../src/modules/look-briefs/look/palette.js';

const { values } = parseArgs({
  options: { reps: { type: 'string', default: '15' }, only: { type: 'string' } },
});
const REPS = Number(values.reps);

/** The few parts of image-q and culori used here (neither is a dependency of the service). */
type PaletteQuantization = 'wuquant' | 'rgbquant' | 'neuquant';
interface Point {
  r: number;
  g: number;
  b: number;
  uint32: number;
}
interface Points {
  getPointArray(): Point[];
}
interface ImageQ {
  utils: { PointContainer: { fromUint8Array(a: Uint8Array, width: number, height: number): Points } };
  buildPaletteSync: (
    images: Points[],
    options: { colors: number; paletteQuantization: PaletteQuantization; colorDistanceFormula: 'euclidean' },
  ) => { getPointContainer(): Points };
  applyPaletteSync: (
    image: Points,
    palette: unknown,
    options: { colorDistanceFormula: 'euclidean'; imageQuantization: 'nearest' },
  ) => Points;
}
interface CuloriRgb {
  mode: 'rgb';
  r: number;
  g: number;
  b: number;
}
interface Culori {
  converter(mode: 'lab65'): (c: CuloriRgb) => { l: number; a: number; b: number };
  converter(mode: 'hsv'): (c: CuloriRgb) => { h?: number };
  differenceCiede2000(): (p: CuloriRgb, q: CuloriRgb) => number;
}

async function load<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch {
    console.error(`${name} is not installed: npm install --no-save image-q@4.0.0 culori@4.0.2`);
    process.exit(2);
  }
}
const { applyPaletteSync, buildPaletteSync, utils } = await load<ImageQ>('image-q');
const culori = await load<Culori>('culori');

const solid = (width: number, height: number, colour: string) =>
  sharp({ create: { width, height, channels: 3, background: colour } });

/** Deterministic noise: the same stills every run. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const clamp = (v: number) => Math.max(0, Math.min(255, Math.round(v)));

function generated(width: number, height: number, at: (x: number, y: number) => [number, number, number]) {
  const buf = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b] = at(x, y);
      const i = (y * width + x) * 3;
      buf[i] = clamp(r);
      buf[i + 1] = clamp(g);
      buf[i + 2] = clamp(b);
    }
  }
  return sharp(buf, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

async function stills(): Promise<Array<[string, Buffer]>> {
  const fixtures = join(import.meta.dirname, '..', 'test', 'fixtures');
  const lamp = await solid(128, 128, '#c8a070').png().toBuffer();
  const left = await solid(320, 360, '#1a2b6d').png().toBuffer();
  const ramp = Buffer.alloc(256 * 32);
  for (let i = 0; i < ramp.length; i++) ramp[i] = i % 256;
  const random = mulberry32(7);
  const blobs = Array.from({ length: 6 }, () => ({
    x: random() * 640,
    y: random() * 360,
    r: 40 + random() * 120,
    c: [random() * 255, random() * 255, random() * 255],
  }));
  return [
    ['orange (test)', await solid(640, 360, '#e8761e').jpeg({ quality: 92 }).toBuffer()],
    [
      'dark (test)',
      await solid(512, 256, '#08090c')
        .composite([{ input: lamp, left: 192, top: 64 }])
        .png()
        .toBuffer(),
    ],
    [
      'split (test)',
      await solid(640, 360, '#f2e6c8')
        .composite([{ input: left, left: 0, top: 0 }])
        .png()
        .toBuffer(),
    ],
    [
      'ramp (test)',
      await sharp(ramp, { raw: { width: 256, height: 32, channels: 1 } })
        .png()
        .toBuffer(),
    ],
    ['wide 12000×8000 (fixture)', gunzipSync(readFileSync(join(fixtures, 'still-12000x8000.jpg.gz')))],
    ['noise', await generated(640, 360, () => [random() * 255, random() * 255, random() * 255])],
    [
      'hue sweep',
      await generated(640, 360, (x, y) => {
        // HSV to RGB: hue across, value down, full saturation
        const h = (x / 640) * 6;
        const v = 255 * (1 - (y / 360) * 0.8);
        const f = (n: number) => {
          const k = (n + h) % 6;
          return v - v * Math.max(0, Math.min(k, 4 - k, 1));
        };
        return [f(5), f(3), f(1)];
      }),
    ],
    [
      'blobs + grain',
      await generated(640, 360, (x, y) => {
        let px = [40, 44, 52];
        for (const b of blobs) {
          const d = Math.hypot(x - b.x, y - b.y) / b.r;
          const w = Math.max(0, 1 - d * d);
          px = px.map((c, k) => c * (1 - w) + b.c[k]! * w);
        }
        const grain = (random() - 0.5) * 16;
        return px.map((c) => c + grain) as [number, number, number];
      }),
    ],
    [
      'dusk',
      await generated(640, 360, (x, y) => {
        const t = y / 360;
        const sky: [number, number, number] = [250 - 120 * t, 150 - 60 * t, 90 + 80 * t];
        const ground = y > 250 + 20 * Math.sin(x / 50);
        const grain = (random() - 0.5) * 10;
        return (ground ? [25 + grain, 30 + grain, 22 + grain] : sky.map((c) => c + grain)) as [
          number,
          number,
          number,
        ];
      }),
    ],
  ];
}

/** What analyse.ts hands paletteOf. */
async function reduce(input: Buffer): Promise<{ pixels: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(input, { limitInputPixels: false, autoOrient: true })
    .resize(ANALYSIS_EDGE, ANALYSIS_EDGE, { fit: 'inside', withoutEnlargement: true, kernel: 'nearest' })
    .flatten({ background: '#000000' })
    .toColourspace('srgb')
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true });
  return { pixels: data, width: info.width, height: info.height };
}

const hex = (rgb: readonly number[]) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;

interface LibColour {
  rgb: [number, number, number];
  share: number;
}

function rgba(pixels: Buffer): Uint8Array {
  const out = new Uint8Array((pixels.length / 3) * 4);
  for (let i = 0, j = 0; i < pixels.length; i += 3, j += 4) {
    out[j] = pixels[i]!;
    out[j + 1] = pixels[i + 1]!;
    out[j + 2] = pixels[i + 2]!;
    out[j + 3] = 255;
  }
  return out;
}

/** image-q's palette of the frame, each colour with the share of pixels mapped to it. */
function libraryPalette(
  pixels: Buffer,
  width: number,
  height: number,
  paletteQuantization: PaletteQuantization,
): LibColour[] {
  const image = utils.PointContainer.fromUint8Array(rgba(pixels), width, height);
  const palette = buildPaletteSync([image], {
    colors: MAX_COLOURS,
    paletteQuantization,
    colorDistanceFormula: 'euclidean',
  });
  const mapped = applyPaletteSync(image, palette, {
    colorDistanceFormula: 'euclidean',
    imageQuantization: 'nearest',
  });
  const counts = new Map<number, number>();
  for (const p of mapped.getPointArray()) counts.set(p.uint32, (counts.get(p.uint32) ?? 0) + 1);
  const total = width * height;
  const points = new Map(
    palette
      .getPointContainer()
      .getPointArray()
      .map((p) => [p.uint32, p]),
  );
  return [...counts]
    .map(([key, n]) => {
      const p = points.get(key)!;
      return { rgb: [p.r, p.g, p.b] as [number, number, number], share: n / total };
    })
    .sort((a, b) => b.share - a.share || hex(a.rgb).localeCompare(hex(b.rgb)));
}

const ciede2000 = culori.differenceCiede2000();
const culoriRgb = ([r, g, b]: readonly number[]): CuloriRgb => ({
  mode: 'rgb',
  r: r! / 255,
  g: g! / 255,
  b: b! / 255,
});
const hexRgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

/** For each of our colours with at least 5 % of the frame: ΔE2000 to the library's nearest colour. */
function match(ours: PaletteEntry[], lib: LibColour[]): { worst: number; shareGap: number; exact: boolean } {
  let worst = 0;
  let shareGap = 0;
  for (const o of ours) {
    if (o.share < 0.05) continue;
    let best = Infinity;
    let share = 0;
    for (const l of lib) {
      const d = ciede2000(culoriRgb(hexRgb(o.hex)), culoriRgb(l.rgb));
      if (d < best) {
        best = d;
        share = l.share;
      }
    }
    worst = Math.max(worst, best);
    shareGap = Math.max(shareGap, Math.abs(share - o.share));
  }
  const exact =
    ours.length === lib.length &&
    ours.every((o, i) => o.hex === hex(lib[i]!.rgb) && Math.abs(o.share - lib[i]!.share) < 5e-5);
  return { worst, shareGap, exact };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function timed(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

const QUANTISERS: PaletteQuantization[] = ['wuquant', 'rgbquant', 'neuquant'];

if (values.only !== 'colour') {
  console.log(`# Palette: ours (median cut + k-means) against image-q, ${REPS} repetitions, medians\n`);
  console.log(
    '| still | px | ours ms | colours | ' +
      QUANTISERS.map((q) => `${q} ms (×ours) | ΔE2000 worst / share gap | same output`).join(' | ') +
      ' |',
  );
  console.log(`|${' --- |'.repeat(4 + QUANTISERS.length * 3)}`);
  const ratios = new Map<string, number[]>(QUANTISERS.map((q) => [q, []]));
  for (const [name, input] of await stills()) {
    const { pixels, width, height } = await reduce(input);
    const ours = paletteOf(pixels);
    const libs = QUANTISERS.map((q) => libraryPalette(pixels, width, height, q));
    const times = new Map<string, number[]>([
      ['ours', []],
      ...QUANTISERS.map((q) => [q, []] as [string, number[]]),
    ]);
    // warm both before timing, then alternate so that load on the machine falls on each alike
    for (let i = 0; i < 3; i++) {
      paletteOf(pixels);
      for (const q of QUANTISERS) libraryPalette(pixels, width, height, q);
    }
    for (let rep = 0; rep < REPS; rep++) {
      times.get('ours')!.push(timed(() => paletteOf(pixels)));
      for (const q of QUANTISERS) times.get(q)!.push(timed(() => libraryPalette(pixels, width, height, q)));
    }
    const oursMs = median(times.get('ours')!);
    const cells = QUANTISERS.map((q, i) => {
      const ms = median(times.get(q)!);
      ratios.get(q)!.push(ms / oursMs);
      const m = match(ours, libs[i]!);
      return `${ms.toFixed(2)} (${(ms / oursMs).toFixed(2)}) | ${m.worst.toFixed(1)} / ${(m.shareGap * 100).toFixed(1)} pt | ${m.exact ? 'yes' : `no (${libs[i]!.length})`}`;
    });
    console.log(
      `| ${name} | ${width}×${height} | ${oursMs.toFixed(2)} | ${ours.length} | ${cells.join(' | ')} |`,
    );
  }
  console.log(
    `\nMedian time ratio library/ours over the stills: ${QUANTISERS.map((q) => `${q} ${median(ratios.get(q)!).toFixed(2)}×`).join(', ')}`,
  );
}

if (values.only !== 'palette') {
  // ---- colour maths: colour.ts against culori, over an sRGB grid ----
  // culori wrapped to the shape colour.ts's callers use (a tuple in, a tuple or a number out): what
  // a switch would ship, so the wrapping is part of its time
  const lab65 = culori.converter('lab65');
  const hsv = culori.converter('hsv');
  const culoriLab = (rgb: readonly [number, number, number]): readonly [number, number, number] => {
    const { l, a, b } = lab65(culoriRgb(rgb));
    return [l, a, b];
  };
  const culoriHue = (r: number, g: number, b: number): number | null => hsv(culoriRgb([r, g, b])).h ?? null;

  const grid: Array<[number, number, number]> = [];
  for (let r = 0; r < 256; r += 5)
    for (let g = 0; g < 256; g += 5) for (let b = 0; b < 256; b += 5) grid.push([r, g, b]);
  let labGap = 0;
  let hueGap = 0;
  let greyDisagree = 0;
  for (const c of grid) {
    const ours = toLab(c);
    const theirs = culoriLab(c);
    labGap = Math.max(labGap, Math.hypot(ours[0] - theirs[0], ours[1] - theirs[1], ours[2] - theirs[2]));
    const h = hueOf(...c);
    const th = culoriHue(...c);
    if ((h === null) !== (th === null)) greyDisagree++;
    else if (h !== null && th !== null) hueGap = Math.max(hueGap, Math.abs(h - th));
  }
  let sink = 0;
  /** Median ms over the grid for each of two functions, timed in alternating order after a warm-up. */
  function race(fns: ReadonlyArray<(c: [number, number, number]) => number>): number[][] {
    const times: number[][] = fns.map(() => []);
    for (let rep = 0; rep < REPS + 3; rep++) {
      const order = rep % 2 ? [1, 0] : [0, 1];
      for (const k of order) {
        const ms = timed(() => {
          for (const c of grid) sink += fns[k]!(c);
        });
        if (rep >= 3) times[k]!.push(ms);
      }
    }
    return times;
  }
  const colourTimes = {
    lab: race([(c) => toLab(c)[0], (c) => culoriLab(c)[0]]),
    hue: race([(c) => hueOf(...c) ?? 0, (c) => culoriHue(...c) ?? 0]),
  };
  const ns = (ms: number[]) => (median(ms) * 1e6) / grid.length;
  const row = (what: string, gap: string, [ours, theirs]: number[][]) =>
    `| ${what} | ${gap} | ${ns(ours!).toFixed(0)} | ${ns(theirs!).toFixed(0)} | ${(ns(theirs!) / ns(ours!)).toFixed(2)}× |`;
  console.log(
    `\n# Colour maths: colour.ts against culori over ${grid.length} sRGB colours, ${REPS} repetitions\n`,
  );
  console.log('| conversion | largest difference | ours ns/call | culori ns/call | culori/ours |');
  console.log('| --- | --- | --- | --- | --- |');
  console.log(row('sRGB → CIELAB D65 (toLab / lab65)', `${labGap.toExponential(1)} ΔE76`, colourTimes.lab));
  console.log(
    row(
      'HSV hue (hueOf / hsv)',
      `${hueGap.toExponential(1)}°, ${greyDisagree} disagree on grey`,
      colourTimes.hue,
    ),
  );
  if (sink === 42) console.log(''); // keeps the timed loops from being optimised away
}
