import { createRequire } from 'node:module';
import type Sharp from 'sharp';

/*
 * sharp (libvips and its colour tables) is loaded on first use, not at start: only the media
 * proxy and the look briefs need it, and loading it was a visible part of start-to-ready
 * (bench/FINDINGS.md §9).
 */

let loading: Promise<typeof Sharp> | undefined;

export const loadSharp = (): Promise<typeof Sharp> =>
  (loading ??= import('sharp').then((m) => {
    // libvips' operation cache would keep decoded images alive after their request (an image
    // is decoded once per request here: nothing to gain from it)
    m.default.cache(false);
    return m.default;
  }));

/** sharp's version, read from its package without loading the library. */
export const SHARP_VERSION: string = (
  createRequire(import.meta.url)('sharp/package.json') as { version: string }
).version;
