/**
 * Failures of the storage underneath a request rather than of the request: the database went
 * away (PostgreSQL restarting, a connection cut, SQLite locked past its busy timeout) or the
 * disk is full. Both are the server's trouble, never the client's, and neither is a bug: the
 * request is refused with a status that says so (503 with Retry-After, or 507) instead of 500.
 */
export type StorageFailure = 'unavailable' | 'full';

/** Socket-level errors of a connection to the database (Node's codes). */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** No room on the disk (or over a quota): the file system's codes. */
const NO_ROOM = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/**
 * PostgreSQL states meaning "not now": class 08 (connection exceptions), 57P01–57P03 (the
 * server is shutting down, crashed or starting), 53300 (too many connections), 53200 (out of
 * memory), and a transaction PostgreSQL rolled back to let others on (40P01 deadlock detected,
 * 40001 serialization failure: writes of several servers meeting on the same rows). The same
 * request sent again succeeds; 53100 is its disk full.
 */
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[1-3]|53[23]00|40P01|40001)$/;

/**
 * 55000 (object not in prerequisite state) as PostgreSQL refuses a login to a database closed
 * to connections (`ALTER DATABASE … ALLOW_CONNECTIONS false`, or one being dropped or created
 * from): "not now" as well. The same state raised by a statement (a sequence's currval not yet
 * defined, say) is a bug, left a 500.
 */
const closedDatabase = (code: string, message: string): boolean =>
  code === '55000' && /is not currently accepting connections/.test(message);

/** What pg and Kysely say, without a code, when a connection or the pool is gone. */
const GONE = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
  'driver has already been destroyed',
];

function ownFailure(err: { code?: unknown; message?: unknown }): StorageFailure | null {
  const code = typeof err.code === 'string' ? err.code : '';
  if (NO_ROOM.has(code) || code === '53100') return 'full';
  const message = typeof err.message === 'string' ? err.message : '';
  if (NETWORK.has(code) || PG_UNAVAILABLE.test(code) || closedDatabase(code, message)) return 'unavailable';
  // SQLITE_BUSY_*, SQLITE_LOCKED_*: held past the busy timeout; SQLITE_IOERR_*: the disk failed a read or write
  if (/^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|READONLY)/.test(code)) return 'unavailable';
  if (GONE.some((m) => message.startsWith(m) || message.includes(m))) return 'unavailable';
  return null;
}

/** Which storage failure an error is (looking into `cause` and an AggregateError's errors), or null. */
export function storageFailure(err: unknown, depth = 0): StorageFailure | null {
  if (err === null || typeof err !== 'object' || depth > 3) return null;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const own = ownFailure(e);
  if (own) return own;
  const inner = [e.cause, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : [])];
  for (const i of inner) {
    const found = storageFailure(i, depth + 1);
    if (found) return found;
  }
  return null;
}
