import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parse, serialize, type SerializeOptions } from 'cookie';
import { Type } from 'typebox';
import { sessionTokenOf } from '../../auth/csrf.js';
import { principalOf } from '../../auth/route-hook.js';
import { actorOf } from '../../auth/audit-actor.js';
import { authenticateSession, endSessionByToken, SESSION_COOKIE } from '../../auth/session-service.js';
import { errors } from '../../errors.js';
import { errorResponses } from '../../http/schemas.js';
import { CallbackQuery, ConsoleSession, LoginQuery, Redirect, SignInOptions } from './schemas.js';
import { beginSignIn, CONSOLE_PATH, currentSession, finishSignIn } from './service.js';
import { routesOf } from '../../http/define-route.js';

const STATE_COOKIE = 'prodgraph_sign_in';
const STATE_PATH = '/api/v1/auth/oidc';
const REDIRECT = { 302: ['Set-Cookie'] } as const;

export async function signInRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { publicUrl } = app.ctx.config.signIn;
  // Secure whenever browsers reach the service over TLS
  const secure = publicUrl?.startsWith('https:') ?? false;
  const cookie = (name: string, value: string, options: SerializeOptions) =>
    serialize(name, value, { httpOnly: true, secure, ...options });
  const configured = (): string => {
    if (!publicUrl || !app.ctx.config.signIn.oidc) {
      throw errors.notFound('sign-in with an identity provider (not configured here)');
    }
    return publicUrl;
  };
  const clearSession = () => cookie(SESSION_COOKIE, '', { sameSite: 'strict', path: '/', maxAge: 0 });

  routesOf(app).get(
    '/auth/sign-in-options',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getSignInOptions',
        summary: 'How a person may sign in to the console here',
        description:
          'Whether an identity provider is configured (the console then offers its button, `GET /api/v1/auth/oidc/login`); signing in with an API key is always possible.',
        tags: ['sign-in'],
        security: [],
        response: { 200: SignInOptions },
      },
    },
    async (request) => {
      const token = sessionTokenOf(request);
      const live = token ? await authenticateSession(app.ctx.db, app.ctx.config.signIn.session, token) : null;
      return {
        identity_provider: app.ctx.config.signIn.oidc !== null && publicUrl !== null,
        signed_in: live !== null,
      };
    },
  );

  routesOf(app).get(
    '/auth/oidc/login',
    {
      config: { auth: 'public', responseHeaders: REDIRECT },
      schema: {
        operationId: 'beginSignIn',
        summary: "Sign in to the console with the studio's identity provider",
        description:
          "A browser navigation, not an API call: redirects (302) to the identity provider's sign-in page (authorization code with PKCE), keeping the sign-in's state in a short-lived cookie. 404 when no provider is configured (PRODGRAPH_OIDC_ISSUER); 502 when the provider's discovery document cannot be read.",
        tags: ['sign-in'],
        security: [],
        querystring: LoginQuery,
        response: { 302: Redirect, ...errorResponses(404, 422, 502) },
      },
    },
    async (request, reply) => {
      const { url, state } = await beginSignIn(app.ctx, request.query.production);
      reply.header(
        'set-cookie',
        // Lax, not Strict: the provider sends the browser back with a cross-site navigation
        cookie(STATE_COOKIE, state, { sameSite: 'lax', path: STATE_PATH, maxAge: 600 }),
      );
      return reply.redirect(url, 302);
    },
  );

  routesOf(app).get(
    '/auth/oidc/callback',
    {
      config: { auth: 'public', responseHeaders: REDIRECT },
      schema: {
        operationId: 'finishSignIn',
        summary: 'Where the identity provider sends the browser back (the redirect URI)',
        description:
          "Checks the state against the browser's own cookie, exchanges the code (with the PKCE verifier) and checks the ID token, then maps the email to a person allowed on a production (GET /admin/sign-in-people). Signed in: a new session (any session the browser came with is ended), its cookie, and a redirect to the console. Refused: a redirect to the console's `#/sign-in-refused/<reason>` (a fragment: the reason never reaches a server log), the reason one of `not_allowed`, `domain`, `group`, `unverified_email`, `no_email`, `choose_production`, `provider`, `no_attempt`.",
        tags: ['sign-in'],
        security: [],
        querystring: CallbackQuery,
        response: { 302: Redirect, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const origin = configured();
      const outcome = await finishSignIn(app.ctx, {
        cookieState: parse(request.headers.cookie ?? '')[STATE_COOKIE],
        callbackUrl: new URL(request.url, origin),
        previousToken: sessionTokenOf(request),
        address: request.ip,
      });
      const forgetState = cookie(STATE_COOKIE, '', { sameSite: 'lax', path: STATE_PATH, maxAge: 0 });
      if (!outcome.ok) {
        request.log.info({ refusal: outcome.refusal, email: outcome.email }, 'console sign-in refused');
        reply.header('set-cookie', [forgetState]);
        return reply.redirect(`${origin}${CONSOLE_PATH}#/sign-in-refused/${outcome.refusal}`, 302);
      }
      request.log.info({ session: outcome.sessionId, email: outcome.email }, 'console sign-in');
      reply.header('set-cookie', [
        forgetState,
        cookie(SESSION_COOKIE, outcome.token, { sameSite: 'strict', path: '/' }),
      ]);
      return reply.redirect(`${origin}${CONSOLE_PATH}`, 302);
    },
  );

  routesOf(app).get(
    '/auth/session',
    {
      config: { auth: { scopes: [], surface: 'production' }, responseHeaders: { 200: ['Cache-Control'] } },
      schema: {
        operationId: 'getConsoleSession',
        summary: 'The console session this request was made with (its cookie)',
        description:
          'Who is signed in, with which role, and the CSRF token every write made with the cookie must carry in `X-CSRF-Token`. 404 for a request made with a key.',
        tags: ['sign-in'],
        response: { 200: ConsoleSession, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const session = currentSession(principalOf(request));
      // it carries the CSRF token: never kept by a cache
      reply.header('cache-control', 'no-store');
      return session;
    },
  );

  routesOf(app).post(
    '/auth/sign-out',
    {
      config: { auth: { scopes: [], surface: 'production' }, responseHeaders: { 204: ['Set-Cookie'] } },
      schema: {
        operationId: 'signOut',
        summary: 'Sign out: end the console session at the server',
        description:
          'Ends the session (its cookie is refused on every server from the next request) and clears the cookie. A write like any other: needs `X-CSRF-Token`. 404 for a request made with a key.',
        tags: ['sign-in'],
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => signOut(request, reply),
  );

  async function signOut(request: FastifyRequest, reply: FastifyReply) {
    const token = sessionTokenOf(request);
    const principal = principalOf(request);
    if (!principal.session || !token) throw errors.notFound('console session');
    await endSessionByToken(app.ctx.db, token, actorOf(principal));
    reply.header('set-cookie', clearSession());
    return reply.code(204).send(null);
  }
}
