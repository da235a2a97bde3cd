import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Principal, RouteAuth } from './principal.js';
import type { Db } from '../db/index.js';
import { errors } from '../errors.js';
import { authenticate, KeyUsage } from './key-service.js';
import { errorResponse } from '../http/schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every /api/v1 route declares this; `public` routes take no key. */
    auth?: RouteAuth | 'public';
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/** The caller of a route that declared an auth requirement (the hook has already checked it). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw errors.unauthorized();
  return request.principal;
}

/**
 * The surface and scope decision for one route, in that order: an engagement-bound key outside
 * the round-trip surface is refused (403 engagement_door) whatever its scopes, then a missing
 * scope (403 scope_missing). REST runs it in the request hook; MCP runs it per tool, resource and prompt with
 * the REST twin's RouteAuth, so a refusal there is word for word the REST one.
 */
export function authorize(principal: Principal, auth: RouteAuth): void {
  if (principal.engagementId !== null && auth.surface !== 'round-trip') {
    throw errors.forbidden(
      'this key is bound to a vendor engagement and reaches only the bundle, turnover, media and purchase-order endpoints',
      'engagement_door',
    );
  }
  const missing = auth.scopes.filter((s) => !principal.scopes.has(s));
  if (missing.length > 0)
    throw errors.forbidden(
      `this key lacks the ${missing.map((s) => `"${s}"`).join(' and ')} scope`,
      'scope_missing',
    );
}

const describe = (auth: RouteAuth): string => {
  if (auth.scopes.length === 0) return 'Any valid key, production-wide or engagement-bound.';
  const scopes = auth.scopes.map((s) => `\`${s}\``).join(' and ');
  return auth.surface === 'round-trip'
    ? `Scope ${scopes}. Round-trip surface: production-wide keys get the whole answer; engagement-bound keys get their engagement's slice.`
    : `Scope ${scopes}. Production-wide keys only: an engagement-bound key gets 403 whatever its scopes.`;
};

function documentRoute(route: RouteOptions, auth: RouteAuth): void {
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const responses = { ...((schema.response as Record<string, unknown>) ?? {}) };
  for (const code of [401, 403]) responses[code] ??= errorResponse;
  const note = describe(auth);
  route.schema = {
    ...schema,
    description:
      typeof schema.description === 'string' && schema.description
        ? `${schema.description}\n\n${note}`
        : note,
    security: [{ bearerAuth: [] }],
    response: responses,
  };
}

async function authPlugin(app: FastifyInstance, opts: { db: Db }) {
  const usage = new KeyUsage(opts.db, 60_000, (err) => app.log.warn({ err }, 'could not record key use'));
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (route.url.startsWith('/api/v1') && auth === undefined) {
      throw new Error(
        `route ${[route.method].flat().join(',')} ${route.url} declares no auth (scope and surface)`,
      );
    }
    if (auth && auth !== 'public') documentRoute(route, auth);
  });

  // onRequest runs before the body is read or validated: 401/403 come before any 422.
  app.addHook('onRequest', async (request) => {
    const auth = request.routeOptions.config?.auth;
    if (!auth || auth === 'public') return;
    const header = request.headers.authorization;
    const token = header ? BEARER.exec(header)?.[1] : undefined;
    if (!token)
      throw errors.unauthorized(
        header ? 'malformed Authorization header (expected "Bearer <key>")' : undefined,
      );
    const principal = await authenticate(opts.db, token);
    if (!principal) throw errors.unauthorized('unknown or revoked API key');
    authorize(principal, auth);
    principal.address = request.ip;
    request.principal = principal;
    usage.used(principal.keyId);
  });

  app.addHook('onClose', async () => usage.flush());
}

export const auth = fp(authPlugin, {
  name: 'prodgraph-auth',
  // onRequest hooks run in registration order: a closing server's 503 comes before a 401
  dependencies: ['prodgraph-shutdown'],
});
