import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, defaultCode, isAppError, type ErrorCode } from '../errors.js';
import { describeValidation, type ValidationItem } from '../validation.js';
import { isBrokenForm } from './multipart-parts.js';

function send(reply: FastifyReply, err: AppError) {
  return reply
    .code(err.status)
    .headers(err.headers)
    .type('application/json; charset=utf-8')
    .send({ detail: err.detail, code: err.code });
}

const fail = (status: number, detail: string, code: ErrorCode = defaultCode(status)) =>
  new AppError(status, detail, {}, code);

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

/**
 * Database refusals a request can provoke (a backstop: services check first). Only the
 * families a client can reach are mapped; anything else stays a 500 and is logged.
 */
function databaseRefusal(err: unknown): AppError | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
    return fail(409, 'this conflicts with a record that exists already; nothing was written');
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY')
    return fail(409, 'this refers to a record that does not exist (or no longer does); nothing was written');
  // 22xxx: a value PostgreSQL cannot take (out of range, bad encoding); 54000: a value too long to index
  if (/^22[0-9A-Z]{3}$/.test(code) || code === '54000' || code === 'SQLITE_TOOBIG')
    return fail(
      422,
      'a value in this request cannot be stored (out of range or too long); nothing was written',
    );
  return null;
}

function classify(err: FastifyError): AppError | null {
  if (isAppError(err)) return err;
  if (err.validation) {
    return fail(
      422,
      describeValidation(err.validation as ValidationItem[], err.validationContext ?? 'request'),
    );
  }
  const known = err.code ? FRAMEWORK[err.code] : undefined;
  if (known) return known(err);
  if (err instanceof SyntaxError && err.statusCode === 400)
    return fail(400, 'request body is not valid JSON');
  if (isBrokenForm(err)) return fail(400, 'malformed multipart/form-data body');
  const db = databaseRefusal(err);
  if (db) return db;
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
    const known = classify(err);
    if (known) {
      // the database caught what a service should have: worth a look, though the client is answered
      if (databaseRefusal(err)) request.log.warn({ err }, 'request refused by the database');
      return send(reply, known);
    }
    request.log.error({ err }, 'unhandled error');
    return send(reply, fail(500, 'internal server error'));
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, fail(404, `no route for ${request.method} ${request.url.split('?')[0]}`, 'route_not_found')),
  );
}
