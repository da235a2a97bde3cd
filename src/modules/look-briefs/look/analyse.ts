import type sharp from 'sharp';
import { decodes, overBudget } from '../../../media/decode.js';
import { loadSharp, SHARP_VERSION } from '../../../media/sharp.js';
import { HUE_FAMILY_NAMES, hueFamily, hueOf, lumaOf, type HueFamily } from './colour.js';
import { MAX_COLOURS, paletteOf, type PaletteEntry } from './palette.js';

/**
 * The look of a still, from its pixels alone: no network, no model. Identified in every
 * brief by METHOD; a brief stored under another method is computed again.
 */
export const METHOD = `prodgraph-look/1: sRGB at ≤256 px (sharp ${SHARP_VERSION}), median cut + k-means, ≤${MAX_COLOURS} colours`;

/** Long edge the still is reduced to before any figure is taken. */
export const ANALYSIS_EDGE = 256;
/** Larger inputs are refused before decoding (a 16,384-pixel square); decoding itself is streamed. */
export const MAX_INPUT_PIXELS = 16_384 * 16_384;

/** A decode that runs longer than this is abandoned (a hostile file, or a starved machine). */
const DECODE_SECONDS = 30;

const LOW_KEY = 0.3;
const HIGH_KEY = 0.62;
const CLIPPED = 0.98;
const CRUSHED = 0.02;
const WARM = 0.05;
/** Below this mean chroma a frame is effectively grey and has no dominant hue. */
const ACHROMATIC = 0.04;

export interface Look {
  image: { width: number; height: number; aspect_ratio: number };
  palette: PaletteEntry[];
  exposure: {
    mean_luma: number;
    key: 'low' | 'mid' | 'high';
    contrast: number;
    clipped_highlights: number;
    crushed_shadows: number;
  };
  colour: { saturation: number; warmth: 'warm' | 'neutral' | 'cool'; dominant_hue: HueFamily | null };
}

/** Why a file could not be analysed, in words fit for a 422. */
export class NotAStill extends Error {}

const round = (v: number, places = 4): number => Number(v.toFixed(places));

/**
 * Decodes a stored still at a bounded size and measures it. Reads the file by path so libvips
 * can shrink while decoding (baseline JPEG) and stream rows (plain PNG, TIFF). What cannot be
 * read that way (a progressive JPEG holds its whole coefficient buffer; WebP, GIF, AVIF decode
 * whole) is estimated from the header and refused when it would take more than
 * `maxDecodeBytes`; decodes take their turn (DecodeGate).
 */
export async function analyseStill(path: string, maxDecodeBytes: number): Promise<Look> {
  const sharp = await loadSharp();
  const input = () =>
    sharp(path, {
      limitInputPixels: MAX_INPUT_PIXELS,
      sequentialRead: true,
      failOn: 'error',
      autoOrient: true,
    });
  let meta: sharp.Metadata;
  try {
    meta = await input().metadata();
  } catch {
    throw new NotAStill('could not be decoded as an image');
  }
  if ((meta.pages ?? 1) > 1 && meta.delay !== undefined)
    throw new NotAStill('is animated, not a still image');
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw new NotAStill('has no readable dimensions');
  if (width * height > MAX_INPUT_PIXELS) {
    throw new NotAStill(`is larger than ${MAX_INPUT_PIXELS} pixels (${width} × ${height})`);
  }
  const over = overBudget(meta, maxDecodeBytes);
  if (over) throw new NotAStill(over);
  const pixels = await decodes.run(async () => {
    try {
      return await input()
        .resize(ANALYSIS_EDGE, ANALYSIS_EDGE, { fit: 'inside', withoutEnlargement: true, kernel: 'nearest' })
        .flatten({ background: '#000000' })
        .toColourspace('srgb')
        .raw({ depth: 'uchar' })
        .timeout({ seconds: DECODE_SECONDS })
        .toBuffer();
    } catch (err) {
      if (err instanceof Error && /^timeout:/.test(err.message)) {
        throw new NotAStill(`took longer than ${DECODE_SECONDS} s to decode`);
      }
      throw new NotAStill('could not be decoded as an image');
    }
  });
  return {
    image: { width, height, aspect_ratio: round(width / height, 3) },
    palette: paletteOf(pixels),
    ...measure(pixels),
  };
}

function measure(pixels: Uint8Array): Pick<Look, 'exposure' | 'colour'> {
  const n = pixels.length / 3;
  let lumaSum = 0;
  let lumaSquares = 0;
  let clipped = 0;
  let crushed = 0;
  let chromaSum = 0;
  let warmthSum = 0;
  const hueWeights = new Map<HueFamily, number>(HUE_FAMILY_NAMES.map((h) => [h, 0]));
  for (let i = 0; i < pixels.length; i += 3) {
    const r = pixels[i]!;
    const g = pixels[i + 1]!;
    const b = pixels[i + 2]!;
    const y = lumaOf(r, g, b);
    lumaSum += y;
    lumaSquares += y * y;
    if (y >= CLIPPED) clipped++;
    if (y <= CRUSHED) crushed++;
    const chroma = (Math.max(r, g, b) - Math.min(r, g, b)) / 255;
    chromaSum += chroma;
    warmthSum += (r - b) / 255;
    const hue = hueOf(r, g, b);
    if (hue !== null) {
      const family = hueFamily(hue);
      hueWeights.set(family, (hueWeights.get(family) ?? 0) + chroma);
    }
  }
  const mean = lumaSum / n;
  const contrast = Math.sqrt(Math.max(0, lumaSquares / n - mean * mean));
  const saturation = chromaSum / n;
  const warmth = warmthSum / n;
  let dominant: HueFamily | null = null;
  if (saturation >= ACHROMATIC) {
    let best = 0;
    for (const [family, weight] of hueWeights) {
      if (weight > best) {
        best = weight;
        dominant = family;
      }
    }
  }
  return {
    exposure: {
      mean_luma: round(mean),
      key: mean < LOW_KEY ? 'low' : mean > HIGH_KEY ? 'high' : 'mid',
      contrast: round(contrast),
      clipped_highlights: round(clipped / n),
      crushed_shadows: round(crushed / n),
    },
    colour: {
      saturation: round(saturation),
      warmth: warmth > WARM ? 'warm' : warmth < -WARM ? 'cool' : 'neutral',
      dominant_hue: dominant,
    },
  };
}
