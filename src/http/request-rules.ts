import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { errors } from '../errors.js';

/*
 * Rules every route gets by declaring its schema the usual way (declareRoute reads them from the
 * schema when the route registers), checked here before any byte of a body is read:
 *
 * - A route takes the media types it declares: `schema.consumes`, else the keys of
 *   `schema.body.content`, else `application/json` when it has a body schema. Any other
 *   Content-Type is 415 naming what the route takes (a JSON body sent as text/plain, a JSON
 *   body sent to an upload route, a form sent to a JSON route).
 * - A body whose schema requires a field (and every upload) must be sent: no body is 422.
 * - multipart/form-data must name its boundary (400 otherwise).
 * - A route with no query-string schema takes no query parameter, so an unknown `?sort=` is
 *   422 on every route, as an unknown body field is.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Filled in from the route's schema by declareRoute. */
    bodyRule?: { accepts: string[]; required: boolean };
  }
}

const JSON_TYPE = 'application/json';
const MULTIPART = 'multipart/form-data';
export const NoQuery = Type.Object({}, { additionalProperties: false });

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const requiresField = (s: unknown) => isObject(s) && Array.isArray(s.required) && s.required.length > 0;

/** Whether a request must carry a body: every upload must, and so must a body whose schema requires a field. */
export const bodyRequired = (accepts: readonly string[], schemas: readonly unknown[]): boolean =>
  accepts.includes(MULTIPART) || schemas.some(requiresField);

export function bodyRule(schema: Schema): { accepts: string[]; required: boolean } | undefined {
  const body = schema.body;
  const content = isObject(body) && isObject(body.content) ? body.content : undefined;
  const consumes = Array.isArray(schema.consumes) ? (schema.consumes as string[]) : undefined;
  if (body === undefined && consumes === undefined) return undefined;
  const accepts = (consumes ?? (content ? Object.keys(content) : [JSON_TYPE])).map((t) => t.toLowerCase());
  const schemas = content ? Object.values(content).map((c) => (isObject(c) ? c.schema : undefined)) : [body];
  return { accepts, required: bodyRequired(accepts, schemas) };
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function checkBody(request: FastifyRequest): void {
  const rule = request.routeOptions.config.bodyRule;
  if (!rule) return;
  const contentType = request.headers['content-type'];
  if (!hasBody(request) && contentType === undefined) {
    if (rule.required) throw errors.invalid('body', `is required (send ${rule.accepts.join(' or ')})`);
    return;
  }
  const mediaType = request.mediaType?.toLowerCase();
  if (!mediaType || !rule.accepts.includes(mediaType)) {
    const sent = contentType === undefined ? 'no Content-Type' : `Content-Type "${contentType}"`;
    throw errors.unsupportedMedia(`${sent} is not accepted here; send ${rule.accepts.join(' or ')}`);
  }
  if (mediaType === MULTIPART && !/;\s*boundary=/i.test(String(contentType))) {
    throw errors.badRequest('multipart/form-data needs a boundary parameter in its Content-Type');
  }
}

async function requestRulesPlugin(app: FastifyInstance) {
  // after onRequest (so 401/403 come first), before the body is parsed
  app.addHook('preParsing', async (request) => checkBody(request));
}

export const requestRules = fp(requestRulesPlugin, {
  name: 'prodgraph-request-rules',
  // the reference's own routes (/, openapi.json) are not the API's: they keep any query string
  dependencies: ['prodgraph-openapi'],
});
