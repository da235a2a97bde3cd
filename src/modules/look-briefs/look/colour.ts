/**
 * Colour arithmetic for look briefs: sRGB ↔ CIELAB, plain colour names, hue families.
 * Kept over culori: its converters are slower per call, and its Lab differs slightly (bench/FINDINGS.md).
 */

export type Rgb = readonly [number, number, number];
type Lab = readonly [number, number, number];

const linear = (c: number): number => {
  const v = c / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
};

const labF = (t: number): number => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 / 116) * t + 16 / 116);

/** sRGB (0–255 per channel) to CIELAB under D65. */
export function toLab([r, g, b]: Rgb): Lab {
  const R = linear(r);
  const G = linear(g);
  const B = linear(b);
  const x = (0.4124564 * R + 0.3575761 * G + 0.1804375 * B) / 0.95047;
  const y = 0.2126729 * R + 0.7151522 * G + 0.072175 * B;
  const z = (0.0193339 * R + 0.119192 * G + 0.9503041 * B) / 1.08883;
  const fx = labF(x);
  const fy = labF(y);
  const fz = labF(z);
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

/** CIE76 colour difference; about 2.3 is the smallest difference most people see. */
export const deltaE = (p: Lab, q: Lab): number => Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);

export const hexOf = ([r, g, b]: Rgb): string =>
  `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;

/** Rec. 709 luma of gamma-encoded sRGB, 0–1: what "brightness" means in grading. */
export const lumaOf = (r: number, g: number, b: number): number =>
  (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;

/**
 * The small fixed table a palette colour is named from: the nearest entry in CIELAB. Plain
 * words a coordinator would use, not paint-chart names.
 */
const NAMED: ReadonlyArray<readonly [string, Rgb]> = [
  ['black', [12, 12, 12]],
  ['dark grey', [64, 64, 64]],
  ['grey', [128, 128, 128]],
  ['light grey', [192, 192, 192]],
  ['white', [245, 245, 245]],
  ['red', [200, 30, 30]],
  ['dark red', [110, 15, 20]],
  ['pink', [240, 160, 180]],
  ['orange', [235, 120, 30]],
  ['peach', [245, 195, 160]],
  ['brown', [120, 72, 35]],
  ['tan', [200, 160, 112]],
  ['beige', [230, 215, 185]],
  ['yellow', [240, 210, 40]],
  ['olive', [125, 125, 40]],
  ['green', [50, 160, 60]],
  ['dark green', [30, 75, 35]],
  ['teal', [30, 140, 140]],
  ['cyan', [60, 200, 220]],
  ['sky blue', [135, 190, 230]],
  ['blue', [40, 80, 200]],
  ['navy', [20, 30, 90]],
  ['purple', [110, 50, 150]],
  ['lavender', [180, 160, 220]],
  ['magenta', [200, 50, 155]],
];
const NAMED_LAB = NAMED.map(([name, rgb]) => [name, toLab(rgb)] as const);

export function colourName(rgb: Rgb): string {
  const lab = toLab(rgb);
  let best = '';
  let bestDistance = Infinity;
  for (const [name, named] of NAMED_LAB) {
    const d = deltaE(lab, named);
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
    }
  }
  return best;
}

export const HUE_FAMILY_NAMES = [
  'red',
  'orange',
  'yellow',
  'green',
  'cyan',
  'blue',
  'purple',
  'magenta',
] as const;
export type HueFamily = (typeof HUE_FAMILY_NAMES)[number];

/** Hue families by upper bound in degrees (red wraps round past 345°). */
const HUE_FAMILIES: ReadonlyArray<readonly [number, HueFamily]> = [
  [15, 'red'],
  [45, 'orange'],
  [70, 'yellow'],
  [165, 'green'],
  [200, 'cyan'],
  [260, 'blue'],
  [290, 'purple'],
  [345, 'magenta'],
  [360, 'red'],
];

export function hueFamily(degrees: number): HueFamily {
  for (const [upper, name] of HUE_FAMILIES) if (degrees < upper) return name;
  return 'red';
}

/** HSV hue in degrees of an sRGB colour, or null for a grey (no hue to speak of). */
export function hueOf(r: number, g: number, b: number): number | null {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const c = max - min;
  if (c === 0) return null;
  let h: number;
  if (max === r) h = ((g - b) / c) % 6;
  else if (max === g) h = (b - r) / c + 2;
  else h = (r - g) / c + 4;
  return (h * 60 + 360) % 360;
}
