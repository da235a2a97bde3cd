/**
 * The general rule for a canonical storage-event timestamp, as the service applied it before
 * its arithmetic shortcut (src/domain/time.ts): a round trip through
 * `Date`. The tests hold the shortcut to it; `bench/event-validation.ts` times both. (The
 * path's general rules are the service's own `normaliseByRules`.)
 */

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A canonical timestamp as itself when a round trip through `Date` keeps it; null when not;
 * `not canonical` for any other form.
 */
export function canonicalByRoundTrip(raw: string): string | null {
  if (!CANONICAL.test(raw)) return 'not canonical';
  const t = new Date(raw);
  return !Number.isNaN(t.getTime()) && t.toISOString() === raw ? raw : null;
}
