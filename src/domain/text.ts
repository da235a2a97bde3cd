/**
 * What the service takes as text, everywhere text comes in (JSON fields, multipart fields and
 * filenames, path and query parameters, headers, storage events).
 *
 * - `free` text (every JSON and form field): any Unicode, with TAB, LF and CR as the only
 *   control characters, so notes and descriptions may span lines.
 * - `line` text (path and query parameters, headers): no control character at all.
 *
 * Refused everywhere: NUL (PostgreSQL cannot store it, SQLite would truncate it in places),
 * the other C0 controls, DEL and the C1 controls, and lone UTF-16 surrogates (they cannot be
 * encoded as UTF-8, so either database would store U+FFFD instead: a silently mangled value).
 */
export type TextKind = 'free' | 'line';

// matching control characters is the point of these two
/* eslint-disable no-control-regex */
const FREE_BAD =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LINE_BAD =
  /[\u0000-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/* eslint-enable no-control-regex */

const codePoint = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Why the text is refused (to follow the field's name), or null when it is acceptable. */
export function textProblem(value: string, kind: TextKind = 'free'): string | null {
  const bad = (kind === 'free' ? FREE_BAD : LINE_BAD).exec(value)?.[0];
  if (bad === undefined) return null;
  const c = bad.charCodeAt(0);
  if (c >= 0xd800 && c <= 0xdfff) return `is not valid Unicode (a lone surrogate ${codePoint(bad)})`;
  return `must not contain the control character ${codePoint(bad)}`;
}
