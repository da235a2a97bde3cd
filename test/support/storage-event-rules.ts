import { posix } from 'node:path';

/**
 * The general rules for a storage event's path and timestamp, written out as the service
 * applied them before its shortcuts for the common forms (src/modules/storage/paths.ts and
 * event-validation.ts). The tests hold the shortcuts to these; `bench/event-validation.ts`
 * times both. Control characters are checked before either and are left out here.
 */

export function pathByRules(raw: string): { path: string } | { reason: string } {
  if (raw.trim() === '') return { reason: 'path must be a non-empty string' };
  const slashed = raw.replace(/\\/g, '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed)) return { reason: 'path must be relative' };
  if (slashed.split('/').includes('..')) return { reason: 'path must not contain ".."' };
  const path = posix.normalize(slashed).replace(/\/+$/, '');
  if (path === '' || path === '.' || path.startsWith('../'))
    return { reason: 'path must name a file inside the filespace' };
  if (path.length > 4096) return { reason: 'path is longer than 4096 characters' };
  return { path: path.replace(/^\.\//, '') };
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A canonical timestamp as itself when a round trip through `Date` keeps it; null when not; `not canonical` for any other form. */
export function canonicalByRoundTrip(raw: string): string | null {
  if (!CANONICAL.test(raw)) return 'not canonical';
  const t = new Date(raw);
  return !Number.isNaN(t.getTime()) && t.toISOString() === raw ? raw : null;
}
