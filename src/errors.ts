/**
 * The one error catalogue. Every failure a person can act on is a `UserError`: a plain-language
 * `detail` and a stable `code`. Services throw its HTTP kind, `AppError` (and the data layer maps
 * the database refusals a request can provoke into them, refusalOf); the HTTP error
 * handler answers them as `{detail, code}`, an MCP tool as its error result. The CLI prints any
 * `UserError` as its detail, one line without a stack, exit 1. Services never know about HTTP
 * beyond the status.
 */

/**
 * The machine-readable `code` every error body carries next to `detail`. Clients and agents
 * branch on the code; people read the detail. The list is part of the v1 contract: codes are
 * only ever added, never renamed or removed.
 */
export const ERROR_CODES = {
  malformed_request: 'the request cannot be read: invalid JSON, a malformed multipart body or URL (400)',
  unauthorized: 'no key, a malformed, unknown or revoked key, or a missing or expired media ticket (401)',
  key_expired: 'the API key passed its expiry (`expires_at`); the detail says when (401)',
  engagement_door:
    'an engagement-bound key called an endpoint outside the bundle, turnover, media and purchase-order surface (403)',
  scope_missing: 'the key lacks a scope the endpoint needs (403)',
  forbidden:
    'a rule refuses this caller: not the person whose step it is, no submit grant, another filespace (403)',
  csrf_refused:
    'a write signed in with the console cookie came without its session’s X-CSRF-Token header, or from another origin (403)',
  not_found: 'no such object, or one out of this key’s reach; the two are indistinguishable (404)',
  route_not_found: 'no such endpoint for this method and path (404)',
  conflict: 'the object is not in a state that allows this: already settled, a stale step, a duplicate (409)',
  invalid_transition:
    'a status change the object’s current status does not allow; the detail names the statuses it may move to (409)',
  too_large: 'a body, file, batch or field count over its limit (413)',
  unsupported_media_type:
    'a Content-Type this endpoint does not take, or file bytes of a type it does not take (415)',
  method_not_allowed: 'the path exists but not for this method; `Allow` lists the methods it takes (405)',
  range_not_satisfiable: 'a Range outside the file (416)',
  invalid_field: 'validation failed; the detail starts with the field, parameter or header it names (422)',
  idempotency_key_reused: 'the Idempotency-Key was used for a different request in the last 24 hours (422)',
  internal: 'an unexpected failure on the server; the detail says nothing more (500)',
  rate_limited: 'too many requests from this key; `Retry-After` says when to try again (429)',
  upstream_failed: 'a provider the service depends on failed or did not answer (502)',
  unavailable:
    'the service, or a part of it (the database), is not available right now; `Retry-After` says when to try again (503)',
  insufficient_storage:
    'the server has no room left to store this write (its disk is full); nothing was written (507)',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The code of an error that names none: one per status. */
export function defaultCode(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'malformed_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 413:
      return 'too_large';
    case 415:
      return 'unsupported_media_type';
    case 416:
      return 'range_not_satisfiable';
    case 422:
      return 'invalid_field';
    case 502:
      return 'upstream_failed';
    case 503:
      return 'unavailable';
    case 507:
      return 'insufficient_storage';
    default:
      return status >= 500 ? 'internal' : 'malformed_request';
  }
}

/**
 * A failure the user can act on, wherever it surfaces: the detail (also the message) says what
 * is wrong in words they can act on, the code names its kind from the catalogue. The CLI's
 * refusals (a flag, the configuration, a document, a backup) are these or thin subclasses that
 * callers catch by kind. Only an `AppError` carries an HTTP status: any other reaching the HTTP
 * error handler is a route's bug, answered 500 like any unexpected error.
 */
export class UserError extends Error {
  constructor(
    readonly detail: string,
    readonly code: ErrorCode = 'invalid_field',
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = new.target.name;
  }
}

/**
 * A refusal in the catalogue's words, with the HTTP status it answers. `cause` keeps the error it
 * was made from (a driver's constraint violation, say): logged, never shown to the client.
 */
export class AppError extends UserError {
  constructor(
    readonly status: number,
    detail: string,
    readonly headers: Record<string, string> = {},
    code?: ErrorCode,
    /** A 422's field, parameter or header (the detail starts with it), for clients to branch on. */
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(detail, code ?? defaultCode(status), options);
  }
}

export const errors = {
  badRequest: (detail: string) => new AppError(400, detail),
  unauthorized: (detail = 'missing or invalid API key') =>
    new AppError(401, detail, { 'www-authenticate': 'Bearer realm="prodgraph"' }),
  /** A key past its `expires_at`: refused as strictly as a revoked one, and told why. */
  keyExpired: (at: string) =>
    new AppError(401, `expired on ${at}`, { 'www-authenticate': 'Bearer realm="prodgraph"' }, 'key_expired'),
  forbidden: (
    detail: string,
    code: 'forbidden' | 'scope_missing' | 'engagement_door' | 'csrf_refused' = 'forbidden',
  ) => new AppError(403, detail, {}, code),
  /** Missing and out-of-reach objects answer exactly alike: one wording per kind of object. */
  notFound: (what: string) => new AppError(404, `${what} not found`),
  methodNotAllowed: (detail: string, allow: string) =>
    new AppError(405, detail, { allow }, 'method_not_allowed'),
  conflict: (detail: string) => new AppError(409, detail),
  /** A status move the transition table does not allow; the detail names the allowed next ones. */
  invalidTransition: (detail: string) => new AppError(409, detail, {}, 'invalid_transition'),
  tooLarge: (detail: string) => new AppError(413, detail),
  unsupportedMedia: (detail: string) => new AppError(415, detail),
  /** A validation failure always names the field. */
  tooManyRequests: (detail: string, retryAfterSeconds: number) =>
    new AppError(429, detail, { 'retry-after': String(retryAfterSeconds) }, 'rate_limited'),
  invalid: (
    field: string,
    problem: string,
    code: 'invalid_field' | 'idempotency_key_reused' = 'invalid_field',
  ) => new AppError(422, `${field}: ${problem}`, {}, code, field),
  badGateway: (detail: string) => new AppError(502, detail),
  /** Retry-After in seconds: a client (or its library) waits that long before trying again. */
  unavailable: (detail: string, retryAfterSeconds?: number) =>
    new AppError(503, detail, retryAfterSeconds ? { 'retry-after': String(retryAfterSeconds) } : {}),
  storageFull: (detail: string) => new AppError(507, detail, {}, 'insufficient_storage'),
} as const;

export const isAppError = (err: unknown): err is AppError => err instanceof AppError;
