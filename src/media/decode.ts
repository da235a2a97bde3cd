import type sharp from 'sharp';
import { AppError } from '../errors.js';

/*
 * Image decodes under a memory bound. What a decode holds depends less on the file's size than
 * on how it must be read: a baseline JPEG is shrunk while it is decoded (libvips reads it at an
 * eighth of its size when that is all it needs) and a plain PNG or TIFF streams row by row, but
 * a progressive JPEG keeps every DCT coefficient of the whole image (2 bytes each, per
 * component, chroma subsampled) until its last scan, and WebP, GIF, AVIF/HEIF and interlaced
 * PNG are decoded whole. A small progressive JPEG of large dimensions costs hundreds of times its
 * file size that way. So the cost of a decode is estimated from the header (no pixel decoded), a
 * decode over the budget is refused, and only a few decodes run at once (the rest wait in a short
 * queue).
 */

/** Decodes at once per process; further requests wait their turn. */
export const DECODE_CONCURRENCY = 2;
/** Requests that may wait for a decode; beyond them, 503 with Retry-After. */
export const DECODE_QUEUE = 16;

/** Bytes per sample of each component a progressive JPEG decoder keeps for the whole image. */
const COEFFICIENT_BYTES = 2;

/** How many full-resolution components a JPEG's chroma subsampling amounts to. */
function jpegComponents(meta: sharp.Metadata): number {
  const channels = meta.channels ?? 3;
  switch (meta.chromaSubsampling) {
    case '4:2:0':
      return 1.5;
    case '4:2:2':
    case '4:4:0':
      return 2;
    default:
      return channels;
  }
}

/** Rows libvips keeps in flight while streaming a sequential read (a generous allowance). */
const STREAMED_ROWS = 256;

/**
 * Bytes a decode of this image will hold at its peak, from its header alone: the coefficient
 * buffer of a progressive JPEG, the whole raster of a format decoded whole, a band of rows
 * for what streams.
 */
export function decodeCost(meta: sharp.Metadata): number {
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  const channels = meta.channels ?? 4;
  const bytesPerSample =
    meta.depth === 'ushort' || meta.depth === 'short' ? 2 : meta.depth === 'float' ? 4 : 1;
  const pixels = width * height;
  switch (meta.format) {
    case 'jpeg':
      if (meta.isProgressive) return pixels * jpegComponents(meta) * COEFFICIENT_BYTES;
      // shrink-on-load: rows of the image at an eighth of its width, and the output's share
      return width * STREAMED_ROWS * channels;
    case 'png':
      if (meta.isProgressive) return pixels * channels * bytesPerSample;
      return width * STREAMED_ROWS * channels * bytesPerSample;
    case 'tiff':
      return width * STREAMED_ROWS * channels * bytesPerSample;
    default:
      // webp, gif, heif (AVIF, HEIC) and anything else: decoded whole
      return pixels * Math.max(channels, 3) * bytesPerSample;
  }
}

const mb = (bytes: number) => Math.ceil(bytes / (1024 * 1024));

/** Why an image may not be decoded here, in words fit for a refusal; null when it may. */
export function overBudget(meta: sharp.Metadata, maxBytes: number): string | null {
  const cost = decodeCost(meta);
  if (cost <= maxBytes) return null;
  const what = `a ${meta.width} × ${meta.height} ${meta.format ?? 'image'}`;
  const why =
    meta.format === 'jpeg' && meta.isProgressive
      ? `${what} saved progressive holds its whole image while decoding (a baseline one of that size would fit)`
      : `${what} is decoded whole`;
  return `would take about ${mb(cost)} MB to decode, more than the ${mb(maxBytes)} MB a decode may use (PRODGRAPH_MAX_DECODE_MB): ${why}`;
}

/** A first-come first-served gate: at most `slots` holders, at most `queue` waiting. */
export class DecodeGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly slots = DECODE_CONCURRENCY,
    private readonly queue = DECODE_QUEUE,
  ) {}

  /** Runs `work` when a slot is free; 503 at once when the queue is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.slots) {
      if (this.waiting.length >= this.queue) {
        throw new AppError(503, 'too many images are being decoded at once; try again in a moment', {
          'retry-after': '2',
        });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // the slot passes straight to the next in line
      if (next) next();
      else this.running--;
    }
  }
}

/** The process's gate: every decode of an uploaded or stored image goes through it. */
export const decodes = new DecodeGate();
