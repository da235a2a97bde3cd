import { createHash } from 'node:crypto';

/** A strong, quoted entity tag over exact bytes (a cached answer that names none of its own). */
export const etagOfBytes = (bytes: Uint8Array): string =>
  `"${createHash('sha256').update(bytes).digest('base64url')}"`;

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
