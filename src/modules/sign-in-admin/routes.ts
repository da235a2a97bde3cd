import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { listSessions, revokeSession } from '../../auth/session-service.js';
import { errors } from '../../errors.js';
import { actorOf } from '../../auth/audit-actor.js';
import { errorResponses } from '../../http/schemas.js';
import { AllowedPerson, IdParams, NewAllowedPerson, SessionSummary } from '../sign-in/schemas.js';
import { allowPerson, listAllowed, SignInError, withdrawPerson } from './service.js';
import { routesOf } from '../../http/define-route.js';

// who may sign in, and the sessions open: credentials, an admin's (a key's `admin` scope, or a signed-in admin)
const admin = { auth: { scopes: ['admin'], surface: 'production', credentials: true } } as const;

export async function signInAdminRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.ctx.db;

  routesOf(app).get(
    '/admin/sign-in-people',
    {
      config: admin,
      schema: {
        operationId: 'listSignInPeople',
        summary: "Who may sign in to the production's console with the identity provider",
        description: 'Each email with its console role and the person of the production it acts as.',
        tags: ['sign-in'],
        response: { 200: Type.Array(AllowedPerson) },
      },
    },
    async (request) => listAllowed(db(), principalOf(request).productionId),
  );

  routesOf(app).post(
    '/admin/sign-in-people',
    {
      config: admin,
      schema: {
        operationId: 'allowSignInPerson',
        summary: 'Let an email sign in, with a role (and a person of the production)',
        description:
          'Again for an email already allowed: the new role and person replace the old, and the sessions opened under the old ones end at once. 422 for a malformed email or an unknown person ref.',
        tags: ['sign-in'],
        body: NewAllowedPerson,
        response: { 200: AllowedPerson, ...errorResponses(422) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      try {
        return await allowPerson(db(), principal.productionId, request.body, actorOf(principal));
      } catch (err) {
        if (err instanceof SignInError)
          throw errors.invalid(err.message.startsWith('no person') ? 'person' : 'email', err.message);
        throw err;
      }
    },
  );

  routesOf(app).delete(
    '/admin/sign-in-people/:id',
    {
      config: admin,
      schema: {
        operationId: 'withdrawSignInPerson',
        summary: "Withdraw an email's sign-in; its sessions end at once",
        tags: ['sign-in'],
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      if (!(await withdrawPerson(db(), p.productionId, request.params.id, actorOf(p))))
        throw errors.notFound('sign-in');
      return reply.code(204).send(null);
    },
  );

  routesOf(app).get(
    '/admin/sessions',
    {
      config: admin,
      schema: {
        operationId: 'listConsoleSessions',
        summary: "The production's live console sessions",
        description: 'Never their tokens. Newest first.',
        tags: ['sign-in'],
        response: { 200: Type.Array(SessionSummary) },
      },
    },
    async (request) => listSessions(db(), principalOf(request).productionId),
  );

  routesOf(app).delete(
    '/admin/sessions/:id',
    {
      config: admin,
      schema: {
        operationId: 'revokeConsoleSession',
        summary: 'End a console session at the server',
        description:
          'Its cookie is refused from the next request, on every server. 404 for no such live session.',
        tags: ['sign-in'],
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      if (!(await revokeSession(db(), p.productionId, request.params.id, actorOf(p))))
        throw errors.notFound('session');
      return reply.code(204).send(null);
    },
  );
}
