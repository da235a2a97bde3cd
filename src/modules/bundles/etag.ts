import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped. Two equal
 * documents always serialise to the same bytes, whatever order they were assembled in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** A strong, quoted entity tag over the document (which must not yet carry its etag). */
export const etagOf = (doc: unknown): string =>
  `"${createHash('sha256').update(canonicalJson(doc)).digest('base64url')}"`;

const opaque = (tag: string): string => {
  const t = tag.trim().replace(/^W\//, '');
  return t.startsWith('"') && t.endsWith('"') && t.length >= 2 ? t.slice(1, -1) : t;
};

/**
 * If-None-Match uses the weak comparison (RFC 9110 §13.1.2): `W/` is ignored, `*` matches any
 * current representation, a list matches when any member does. Bare (unquoted) tags are
 * accepted too, for clients that copied the value without its quotes.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const want = opaque(etag);
  return header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .some((t) => t === '*' || opaque(t) === want);
}
