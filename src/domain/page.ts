import { createHash } from 'node:crypto';
import { errors } from '../errors.js';
import { zip } from '../util/zip.js';

/*
 * Opt-in cursor paging for the long lists. A cursor is opaque to clients: base64url JSON naming
 * the list, the production, a fingerprint of the filters it was issued under and the sort key of
 * the last row served. The next page is "rows after that key" (keyset, never an offset), so rows
 * written or retired while a client walks the list never shift a page: a row present throughout
 * the walk is served exactly once.
 */

/** The largest page any list serves; a larger `limit` is clamped to it. */
export const MAX_PAGE = 1000;

export type KeyType = 'int' | 'text';

/** One list's keyset: its name (cursors are not interchangeable) and its sort key's types. */
export interface PagedList {
  name: string;
  key: readonly KeyType[];
  /** Rows in one page at most; a larger `limit` is clamped to it. */
  maxLimit: number;
}

export type KeyValues = Array<number | string>;

/** What a list query needs to serve one page. */
export interface PageWindow {
  /** Rows to serve (undefined: the whole list, as before paging existed). */
  limit: number | undefined;
  /** Sort key of the last row already served. */
  after: KeyValues | undefined;
  /** Normalised ISO-8601 UTC: only rows changed after it, retired ones included. */
  since: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or null when this page is the last. */
  next: string | null;
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
  updated_since?: string;
}

const CURSOR_VERSION = 1;

const fingerprint = (filters: Record<string, unknown>): string => {
  const canonical = Object.keys(filters)
    .filter((k) => filters[k] !== undefined)
    .sort()
    .map((k) => [k, filters[k]]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 16);
};

function encode(list: PagedList, productionId: number, filters: Record<string, unknown>, key: KeyValues) {
  const body = { v: CURSOR_VERSION, l: list.name, p: productionId, f: fingerprint(filters), k: key };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Every int sort key is a 32-bit column: a larger value could only be forged, and PostgreSQL would refuse it. */
const INT_BOUND = 2_147_483_647;
const keyValueFits = (t: KeyType, v: unknown) =>
  t === 'int'
    ? Number.isInteger(v) && Math.abs(v as number) <= INT_BOUND
    : typeof v === 'string' && v.length <= 200;

/** The sort key a cursor carries, or a 422 saying why it cannot be used here. */
function decode(
  list: PagedList,
  productionId: number,
  filters: Record<string, unknown>,
  cursor: string,
): KeyValues {
  const malformed = () =>
    errors.invalid(
      'cursor',
      'is not a cursor this server issued (use the one the previous page named: its Link header, or a tool result’s next_cursor)',
    );
  if (cursor.length > 1000 || !BASE64URL.test(cursor)) throw malformed();
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw malformed();
  const { v, l, p, f, k } = body as Record<string, unknown>;
  if (v !== CURSOR_VERSION || typeof l !== 'string' || typeof f !== 'string' || !Array.isArray(k)) {
    throw malformed();
  }
  if (l !== list.name || p !== productionId) {
    throw errors.invalid(
      'cursor',
      `belongs to another list or production; it pages ${list.name} only where it was issued`,
    );
  }
  if (f !== fingerprint(filters)) {
    throw errors.invalid(
      'cursor',
      'was issued for other filters; send the same filters with it, or start again without a cursor',
    );
  }
  if (k.length !== list.key.length || !zip(list.key, k).every(([kind, x]) => keyValueFits(kind, x)))
    throw malformed();
  return k as KeyValues;
}

/** ISO-8601 with a zone, as the query schema checks it, normalised to the stored form. */
export function normaliseInstant(field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw errors.invalid(field, 'must be an ISO-8601 date-time with a zone');
  return new Date(ms).toISOString();
}

/**
 * Opens one page of a list: checks the cursor against the list, the production and the filters
 * (everything in the query but `limit` and `cursor`), and answers what the query needs, plus how
 * to close the page once the rows (one more than `limit`, to know whether more follow) are read.
 */
export function openPage(
  list: PagedList,
  productionId: number,
  query: PageQuery & Record<string, unknown>,
  defaultLimit?: number,
) {
  const { limit: asked, cursor, ...filters } = query;
  const limit = asked === undefined ? defaultLimit : Math.min(asked, list.maxLimit);
  const after = cursor === undefined ? undefined : decode(list, productionId, filters, cursor);
  const window: PageWindow = { limit, after, since: normaliseInstant('updated_since', query.updated_since) };
  const close = <R, T>(rows: readonly R[], keyOf: (row: R) => KeyValues, map: (row: R) => T): Page<T> => {
    const more = limit !== undefined && rows.length > limit;
    const served = more ? rows.slice(0, limit) : rows;
    const last = served[served.length - 1];
    return {
      items: served.map(map),
      next: more && last !== undefined ? encode(list, productionId, filters, keyOf(last)) : null,
    };
  };
  return { window, close };
}
