import type { FastifyInstance, RouteOptions, RouteShorthandOptions } from 'fastify';
import type { RouteAuth } from '../auth/principal.js';
import { IdempotencyHeaders } from './idempotency.js';
import { bodyRule, NoQuery } from './request-rules.js';
import { errorResponse } from './schemas.js';

/*
 * The one way a route of the service is declared. A route's file gives its method, URL, auth,
 * schema and what it takes (an upload's limit, an idempotency key, a rate limit of its own);
 * `declareRoute` turns that into the route Fastify registers, adding what every such route
 * answers, so this file and the route's own file say everything a route answers:
 *
 * - 401 and 403 when it takes a key (auth other than `'public'`), with the scope it needs in
 *   its description and the bearer scheme as its security;
 * - 503 (the database unavailable, or the server closing) on every documented route, and 507
 *   (disk full) on every one that writes (a method other than GET and HEAD);
 * - 429 unless it opts out of the rate limit (`config.rateLimit: false`), whatever this install's
 *   limit: the document describes the API, not one install;
 * - 413 and a body limit for an upload (`config.upload.maxBytes`);
 * - the media types its body may come in (415 otherwise, 422 for a required body left out) and,
 *   when it declares no query schema, a closed one: an unknown query parameter is 422;
 * - the `Idempotency-Key` header on a write that takes one (`config.idempotent`).
 *
 * The route table's one `onRoute` hook refuses, at start-up, any route that declares an auth or
 * sits under /api/v1 and did not come through here.
 */

const declared = new WeakSet<object>();

/** Whether a route's options came through declareRoute (the route table's check). */
export const isDeclared = (route: Pick<RouteOptions, 'config'>): boolean =>
  route.config !== undefined && declared.has(route.config);

type Responses = Record<string, unknown>;
type Schema = Record<string, unknown>;

const READS = new Set(['GET', 'HEAD']);

const scopeNote = (auth: RouteAuth): string => {
  if (auth.scopes.length === 0) return 'Any valid key, production-wide or engagement-bound.';
  const scopes = auth.scopes.map((s) => `\`${s}\``).join(' and ');
  return auth.surface === 'round-trip'
    ? `Scope ${scopes}. Round-trip surface: production-wide keys get the whole answer; engagement-bound keys get their engagement's slice.`
    : `Scope ${scopes}. Production-wide keys only: an engagement-bound key gets 403 whatever its scopes.`;
};

/** What a key-taking route adds: 401/403, the scope in words, the bearer scheme. */
function keyed(schema: Schema, responses: Responses, auth: RouteAuth): Schema {
  responses[401] ??= errorResponse;
  responses[403] ??= errorResponse;
  const note = scopeNote(auth);
  const own = typeof schema.description === 'string' && schema.description ? schema.description : '';
  return { description: own ? `${own}\n\n${note}` : note, security: [{ bearerAuth: [] }] };
}

/** The upload's body limit (the route's own when smaller), or none. */
function uploadLimit(name: string, route: RouteShorthandOptions): number | undefined {
  const rule = route.config?.upload;
  if (rule === undefined) return route.bodyLimit;
  if (!Number.isSafeInteger(rule.maxBytes) || rule.maxBytes < 1)
    throw new Error(`${name}: config.upload.maxBytes must be a positive whole number`);
  return Math.min(route.bodyLimit ?? rule.maxBytes, rule.maxBytes);
}

/** Its own headers with the Idempotency-Key beside them. */
function withIdempotencyKey(own: unknown): unknown {
  if (own === undefined) return IdempotencyHeaders;
  const headers = own as { properties?: Record<string, unknown> };
  return { ...headers, properties: { ...headers.properties, ...IdempotencyHeaders.properties } };
}

/** The route Fastify registers for one declared route (see the top of this file). */
export function declareRoute<O extends RouteShorthandOptions>(methods: string[], url: string, route: O): O {
  const name = `route ${methods.join(',')} ${url}`;
  const config = route.config;
  const auth = config?.auth;
  if (!config || auth === undefined) throw new Error(`${name} declares no auth (scope and surface)`);
  const schema = { ...(route.schema ?? {}) } as Schema;
  const responses: Responses = { ...((schema.response as Responses | undefined) ?? {}) };
  const documented = schema.hide !== true;
  const own = auth === 'public' ? {} : keyed(schema, responses, auth);
  if (documented) responses[503] ??= errorResponse;
  if (documented && methods.some((m) => !READS.has(m))) responses[507] ??= errorResponse;
  if (documented && config.rateLimit !== false) responses[429] ??= errorResponse;
  if (config.upload) responses[413] ??= errorResponse;
  const rule = bodyRule(schema);
  const finalConfig = { ...config, ...(rule ? { bodyRule: rule } : {}) };
  declared.add(finalConfig);
  const bodyLimit = uploadLimit(name, route);
  return {
    ...route,
    ...(bodyLimit === undefined ? {} : { bodyLimit }),
    config: finalConfig,
    schema: {
      ...schema,
      ...own,
      response: responses,
      ...(schema.querystring === undefined ? { querystring: NoQuery } : {}),
      ...(config.idempotent ? { headers: withIdempotencyKey(schema.headers) } : {}),
    },
  };
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type DeclaredRoutes<A extends FastifyInstance> = Pick<A, Method | 'route'>;

/**
 * A plugin's routes, each registered through declareRoute: `routesOf(app).get(url, options,
 * handler)` takes what `app.get` takes, and keeps its types (the schema's types reach the handler).
 */
export function routesOf<A extends FastifyInstance>(app: A): DeclaredRoutes<A> {
  const shorthand =
    (method: string) => (url: string, options: RouteShorthandOptions, handler?: RouteOptions['handler']) =>
      app.route({
        ...declareRoute([method], url, options),
        method,
        url,
        handler: handler ?? (options as RouteOptions).handler,
      });
  const routes = {
    get: shorthand('GET'),
    post: shorthand('POST'),
    put: shorthand('PUT'),
    patch: shorthand('PATCH'),
    delete: shorthand('DELETE'),
    route: (options: RouteOptions) => app.route(declareRoute([options.method].flat(), options.url, options)),
  };
  // Fastify's own signatures, so a route's schema types its handler exactly as app.get does
  return routes as unknown as DeclaredRoutes<A>;
}
