import { posix } from 'node:path';
import { textProblem } from '../../domain/text.js';

/**
 * What a path must hold for the general rules below to change or refuse it: a backslash, an
 * empty, `.` or `..` segment, a leading or trailing slash, a drive letter. A path with none of
 * these is already in normal form. Agents send thousands of such paths a batch, and the general
 * rules cost a tenth of an event's whole cost.
 */
const NEEDS_WORK = /\\|\/\/|(?:^|\/)\.\.?(?:\/|$)|^\/|\/$|^[A-Za-z]:/;

/**
 * A filespace path as the library keeps it: relative, forward slashes, normalised, inside the
 * filespace. Returns the normal form, or the reason it is refused.
 */
export function normaliseLibraryPath(raw: unknown): { path: string } | { reason: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { reason: 'path must be a non-empty string' };
  const text = textProblem(raw, 'line');
  if (text !== null) return { reason: `path ${text}` };
  if (!NEEDS_WORK.test(raw)) {
    return raw.length > 4096 ? { reason: 'path is longer than 4096 characters' } : { path: raw };
  }
  return normaliseByRules(raw);
}

/**
 * The general rules, for a non-blank path without control characters: slashes turned forward,
 * refused when absolute or climbing out, normalised. What the shortcut above must agree with
 * (test/storage-event-fields.test.ts holds it to that).
 */
export function normaliseByRules(raw: string): { path: string } | { reason: string } {
  const slashed = raw.replace(/\\/g, '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed)) return { reason: 'path must be relative' };
  if (slashed.split('/').includes('..')) return { reason: 'path must not contain ".."' };
  const path = posix.normalize(slashed).replace(/\/+$/, '');
  if (path === '' || path === '.' || path.startsWith('../'))
    return { reason: 'path must name a file inside the filespace' };
  if (path.length > 4096) return { reason: 'path is longer than 4096 characters' };
  return { path: path.replace(/^\.\//, '') };
}
