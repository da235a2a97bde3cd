import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { storageFailure } from '../db/failures.js';
import { isDatabaseRefusal } from '../db/refusals.js';
import { AppError, defaultCode, errors, isAppError, type ErrorCode } from '../errors.js';
import { validationFailure } from '../validation.js';
import { isBrokenForm } from './multipart-parts.js';
import { allowedMethods } from './allowed-methods.js';

/**
 * The field a 422 names: the one the error carries, else the word its detail starts with (every
 * 422 detail starts with its field), so a client never has to parse the detail for it.
 */
const fieldOf = (err: AppError): string | undefined =>
  err.status !== 422 ? undefined : (err.field ?? /^([^:\s]+):/.exec(err.detail)?.[1] ?? 'request');

function send(reply: FastifyReply, err: AppError) {
  const field = fieldOf(err);
  return reply
    .code(err.status)
    .headers(err.headers)
    .type('application/json; charset=utf-8')
    .send({ detail: err.detail, code: err.code, ...(field === undefined ? {} : { field }) });
}

const fail = (status: number, detail: string, code: ErrorCode = defaultCode(status), field?: string) =>
  new AppError(status, detail, {}, code, field);

/** The Fastify and plugin errors a client can cause, in the catalogue's words. */
const FRAMEWORK: Record<string, (err: FastifyError) => AppError> = {
  FST_ERR_BAD_URL: () => fail(400, 'the URL is not valid: a percent-escape is malformed or is not UTF-8'),
  FST_ERR_MAX_PARAM_LENGTH: () => fail(422, 'path: a path parameter is longer than 500 characters'),
  // Fastify's parser also lands here for a __proto__ or constructor.prototype key, refused outright
  FST_ERR_CTP_INVALID_JSON_BODY: () => fail(400, 'request body is not valid JSON'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => fail(400, 'request body is empty'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => fail(415, 'unsupported Content-Type'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => fail(400, 'Content-Length does not match the body'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => fail(413, 'request body is larger than this endpoint accepts'),
  FST_ERR_CTP_INVALID_TYPE: () => fail(415, 'the Content-Type header is not valid'),
  FST_INVALID_MULTIPART_CONTENT_TYPE: () => fail(415, 'send multipart/form-data'),
  FST_REQ_FILE_TOO_LARGE: () => fail(413, 'a file is larger than this endpoint accepts'),
  FST_FILES_LIMIT: () => fail(413, 'too many files in this request'),
  FST_PARTS_LIMIT: () => fail(413, 'too many form parts in this request'),
  FST_FIELDS_LIMIT: () => fail(413, 'too many form fields in this request'),
  FST_PROTO_VIOLATION: () => fail(422, 'form: forbidden field name'),
};

/** Seconds a client is asked to wait while the database is away: a restart takes a few. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2;

/**
 * The database gone or the disk full: the server's trouble, not the client's and not a bug.
 * A write refused this way rolled back (its staged files discarded); one whose commit was cut
 * off may have landed, which a retry with the same Idempotency-Key settles without doubling it.
 */
export function storageRefusal(err: unknown): AppError | null {
  switch (storageFailure(err)) {
    case 'full':
      return errors.storageFull(
        'the server has no room left to store this (its disk is full); nothing was written',
      );
    case 'unavailable':
      return errors.unavailable(
        'the database is not available right now; retry in a moment (a write retried with the same Idempotency-Key is applied at most once)',
        OUTAGE_RETRY_AFTER_SECONDS,
      );
    default:
      return null;
  }
}

function classify(err: FastifyError): AppError | null {
  if (isAppError(err)) return err;
  if (err.validation) {
    const { field, detail } = validationFailure(err.validation, err.validationContext ?? 'request');
    return fail(422, detail, 'invalid_field', field);
  }
  const known = err.code ? FRAMEWORK[err.code] : undefined;
  if (known) return known(err);
  if (err instanceof SyntaxError && err.statusCode === 400)
    return fail(400, 'request body is not valid JSON');
  if (isBrokenForm(err)) return fail(400, 'malformed multipart/form-data body');
  // the database refusals a request can provoke arrive as catalogue errors already (refusalOf)
  const storage = storageRefusal(err);
  if (storage) return storage;
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return fail(status, err.message || 'bad request');
  return null;
}

/** An HTTP request the server cannot even parse still gets the catalogue's body (as Fastify's default does its own). */
function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, detail] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'the request took too long to arrive']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'the request headers are too large']
        : [400, 'Bad Request', 'the HTTP request is malformed'];
  const body = JSON.stringify({ detail, code: 'malformed_request' satisfies ErrorCode });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Fastify's `frameworkErrors` (a bad URL, a path parameter too long): the same catalogue. */
export const frameworkError = (err: FastifyError, reply: FastifyReply) =>
  send(reply, classify(err) ?? fail(400, 'bad request'));

export { clientError };

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // the client went away mid-request (its body cut off, ECONNRESET "aborted"): not the
    // database's connection, not a bug; nobody is left to answer, and the request log says
    // `request aborted` with its method and URL
    if (request.raw.aborted) return send(reply, fail(400, 'the request was cut off before it arrived whole'));
    const known = classify(err);
    if (known) {
      // the database caught what a service should have: worth a look, though the client is answered
      if (isDatabaseRefusal(err)) request.log.warn({ err: err.cause }, 'request refused by the database');
      else if (!isAppError(err) && storageRefusal(err))
        request.log.warn({ err }, 'request refused: storage unavailable');
      return send(reply, known);
    }
    request.log.error({ err }, 'unhandled error');
    return send(reply, fail(500, 'internal server error'));
  });

  // built on the first miss, when every route is registered
  let allowed: ((path: string) => string[]) | undefined;
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    allowed ??= allowedMethods(app.routeTable);
    const allow = allowed(path);
    if (allow.length > 0) {
      const list = allow.join(', ');
      return send(
        reply,
        errors.methodNotAllowed(`${request.method} is not allowed on ${path}; it takes ${list}`, list),
      );
    }
    return send(reply, fail(404, `no route for ${request.method} ${path}`, 'route_not_found'));
  });
}
