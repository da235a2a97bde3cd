import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Principal, RouteAuth } from './principal.js';
import type { SignInConfig } from '../config-sign-in.js';
import type { Db } from '../db/index.js';
import { errors } from '../errors.js';
import { checkCsrf, sessionTokenOf } from './csrf.js';
import { authenticate, KeyUsage } from './key-service.js';
import { authenticateSession } from './session-service.js';

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
 * its REST route's RouteAuth, so a refusal there is word for word the REST one.
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
      principal.session
        ? `a signed-in ${principal.session.role} may not do this (it needs the ${missing.map((s) => `"${s}"`).join(' and ')} scope)`
        : `this key lacks the ${missing.map((s) => `"${s}"`).join(' and ')} scope`,
      'scope_missing',
    );
  if (auth.credentials && principal.session && principal.session.role !== 'admin')
    throw errors.forbidden(
      `keys, webhooks, sign-in and sessions are managed by a signed-in admin, not a ${principal.session.role}`,
    );
}

/**
 * The caller of a request: its bearer key when it sends an Authorization header (tools, and the
 * console signed in with a key), else its console session cookie, whose writes must also pass
 * the CSRF check. Null when it presents neither.
 */
async function callerOf(request: FastifyRequest, opts: AuthOptions): Promise<Principal | null> {
  const header = request.headers.authorization;
  if (header) {
    const token = BEARER.exec(header)?.[1];
    if (!token) throw errors.unauthorized('malformed Authorization header (expected "Bearer <key>")');
    const principal = await authenticate(opts.db, token);
    if (!principal) throw errors.unauthorized('unknown or revoked API key');
    return principal;
  }
  const sessionToken = sessionTokenOf(request);
  if (!sessionToken) return null;
  const principal = await authenticateSession(opts.db, opts.signIn.session, sessionToken);
  if (!principal) throw errors.unauthorized('the console session has ended; sign in again');
  checkCsrf(request, principal, opts.signIn.publicUrl);
  return principal;
}

interface AuthOptions {
  db: Db;
  signIn: SignInConfig;
  /**
   * authorize(), with a known caller's refusal recorded in the audit trail: the app passes
   * `authorizeOrRecord` (of the audit module), which MCP calls too.
   */
  authorize: (db: Db, principal: Principal, auth: RouteAuth, where: string) => Promise<void>;
}

async function authPlugin(app: FastifyInstance, opts: AuthOptions) {
  const usage = new KeyUsage(opts.db, 60_000, (err) => app.log.warn({ err }, 'could not record key use'));
  app.decorateRequest('principal', null);

  // onRequest runs before the body is read or validated: 401/403 come before any 422.
  app.addHook('onRequest', async (request) => {
    const auth = request.routeOptions.config?.auth;
    if (!auth || auth === 'public') return;
    const principal = await callerOf(request, opts);
    if (!principal) throw errors.unauthorized();
    principal.address = request.ip;
    await opts.authorize(opts.db, principal, auth, `${request.method} ${request.routeOptions.url ?? ''}`);
    request.principal = principal;
    if (!principal.session) usage.used(principal.keyId);
  });

  app.addHook('onClose', async () => usage.flush());
}

export const auth = fp(authPlugin, {
  name: 'prodgraph-auth',
  // onRequest hooks run in registration order: a closing server's 503 comes before a 401
  dependencies: ['prodgraph-shutdown'],
});
