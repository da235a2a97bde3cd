import { timingSafeEqual } from 'node:crypto';
import { parse } from 'cookie';
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import type { Principal } from './principal.js';
import { SESSION_COOKIE } from './session-service.js';

/*
 * Cross-site request forgery. A console session rides on a cookie, which a browser attaches by
 * itself; a bearer key never does, so only cookie-authenticated writes need this. Three layers,
 * any one of which stops a forged write:
 *  - the cookie is SameSite=Strict: a browser does not send it on a request another site starts;
 *  - every write must carry the session's own CSRF token in `X-CSRF-Token`. The token is random
 *    per session, stored server-side and handed only to the console's own script
 *    (GET /api/v1/auth/session, a same-origin read another site cannot make), so a forging page
 *    cannot know it; a custom header also forces a CORS preflight that is never granted;
 *  - when the browser names the request's `Origin`, it must be the service's public origin.
 * Safe methods (GET, HEAD, OPTIONS) change nothing and need none of it.
 */

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER = 'x-csrf-token';

/** The session token in a request's cookie, if it carries one. */
export function sessionTokenOf(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  return parse(header)[SESSION_COOKIE] || null;
}

const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export function checkCsrf(request: FastifyRequest, principal: Principal, publicUrl: string | null): void {
  if (SAFE.has(request.method) || !principal.session) return;
  const origin = request.headers.origin;
  if (origin !== undefined && (publicUrl === null || origin !== new URL(publicUrl).origin)) {
    throw errors.forbidden(
      `a console write from origin ${JSON.stringify(origin)} is refused`,
      'csrf_refused',
    );
  }
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== 'string' || !same(given, principal.session.csrfToken)) {
    throw errors.forbidden(
      'a write signed in with the console cookie needs its session’s X-CSRF-Token header',
      'csrf_refused',
    );
  }
}
