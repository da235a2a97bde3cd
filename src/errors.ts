/**
 * The one error catalogue. Services throw these; the HTTP error handler (and later MCP)
 * turns them into `{detail}` responses. Services never know about HTTP beyond the status.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export const errors = {
  badRequest: (detail: string) => new AppError(400, detail),
  unauthorized: (detail = 'missing or invalid API key') =>
    new AppError(401, detail, { 'www-authenticate': 'Bearer realm="prodgraph"' }),
  forbidden: (detail: string) => new AppError(403, detail),
  /** Missing and out-of-reach objects answer exactly alike: one wording per kind of object. */
  notFound: (what: string) => new AppError(404, `${what} not found`),
  methodNotAllowed: (detail: string, allow: string) => new AppError(405, detail, { allow }),
  conflict: (detail: string) => new AppError(409, detail),
  tooLarge: (detail: string) => new AppError(413, detail),
  unsupportedMedia: (detail: string) => new AppError(415, detail),
  /** A validation failure always names the field. */
  invalid: (field: string, problem: string) => new AppError(422, `${field}: ${problem}`),
  tooManyRequests: (detail: string, retryAfterSeconds: number) =>
    new AppError(429, detail, { 'retry-after': String(retryAfterSeconds) }),
  badGateway: (detail: string) => new AppError(502, detail),
  unavailable: (detail: string) => new AppError(503, detail),
} as const;

export const isAppError = (err: unknown): err is AppError => err instanceof AppError;
