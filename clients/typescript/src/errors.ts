import type { components } from './openapi.js';

export type ErrorBody = components['schemas']['ErrorBody'];

/**
 * A refusal the helpers raise (the typed calls answer `{ error, response }` instead): the
 * server's `{detail, code}` body, `field` on a 422, and the response itself.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorBody['code'] | undefined;
  readonly detail: string;
  /** On a 422: the field, parameter or header at fault. */
  readonly field: string | undefined;

  constructor(
    readonly response: Response,
    body: unknown,
  ) {
    const known = isErrorBody(body) ? body : undefined;
    const detail = known?.detail ?? `${response.status} ${response.statusText}`.trim();
    super(`${response.status} ${detail}`);
    this.name = 'ApiError';
    this.status = response.status;
    this.code = known?.code;
    this.detail = detail;
    this.field = known?.field;
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as ErrorBody).detail === 'string' &&
    typeof (body as ErrorBody).code === 'string'
  );
}
