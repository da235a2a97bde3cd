import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../errors.js';
import { describeValidation, type ValidationItem } from '../validation.js';

function send(reply: FastifyReply, status: number, detail: string, headers: Record<string, string> = {}) {
  return reply.code(status).headers(headers).type('application/json; charset=utf-8').send({ detail });
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isAppError(err)) return send(reply, err.status, err.detail, err.headers);
    if (err.validation) {
      return send(
        reply,
        422,
        describeValidation(err.validation as ValidationItem[], err.validationContext ?? 'request'),
      );
    }
    const status = err.statusCode ?? 500;
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (status === 400 && err instanceof SyntaxError)) {
      return send(reply, 400, 'request body is not valid JSON');
    }
    if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return send(reply, 400, 'request body is empty');
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return send(reply, 415, 'unsupported Content-Type');
    if (status === 413 || err.code === 'FST_REQ_FILE_TOO_LARGE' || err.code === 'FST_FILES_LIMIT') {
      return send(reply, 413, 'request is larger than this service accepts');
    }
    if (status >= 400 && status < 500) return send(reply, status, err.message || 'bad request');
    request.log.error({ err }, 'unhandled error');
    return send(reply, 500, 'internal server error');
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, 404, `no route for ${request.method} ${request.url.split('?')[0]}`),
  );
}
