import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { respondToWrite } from '../../http/idempotency.js';
import { NOT_CACHED } from '../../http/reference-headers.js';
import { errorResponses } from '../../http/schemas.js';
import {
  ApiKey,
  Engagement,
  EngagementQuery,
  Grant,
  GrantQuery,
  IdParams,
  KeyQuery,
  MintedKey,
  NewEngagement,
  NewGrant,
  NewKey,
} from './schemas.js';
import * as admin from './service.js';
import { routesOf } from '../../http/define-route.js';

const read = { auth: { scopes: ['admin'], surface: 'production' } } as const;
const write = { ...read, idempotent: true } as const;
// keys are credentials: a signed-in coordinator may not mint or revoke them
const keyRead = { auth: { ...read.auth, credentials: true } } as const;
const keyWrite = { ...keyRead, idempotent: true } as const;
const yes = (v: string | undefined) => v === '1' || v === 'true';

const RECORDED =
  'Recorded in the activity feed. Effective on the very next request: the clamp judges grants live on every request.';

export async function adminRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.ctx.db;

  routesOf(app).get(
    '/admin/engagements',
    {
      config: read,
      schema: {
        operationId: 'listEngagements',
        summary: "The production's vendor engagements",
        description:
          'Each with its organisation, departments, number of live grants and of unrevoked keys, and whether it came from the production document or an administrator.',
        tags: ['admin'],
        querystring: EngagementQuery,
        response: { 200: Type.Array(Engagement), ...errorResponses(422) },
      },
    },
    async (request) =>
      admin.listEngagements(db(), principalOf(request).productionId, {
        includeArchived: yes(request.query.include_archived),
      }),
  );

  routesOf(app).get(
    '/admin/engagements/:id',
    {
      config: read,
      schema: {
        operationId: 'getEngagement',
        summary: 'One vendor engagement',
        description:
          'As the list shows it (archived or not): its organisation, departments, number of live grants and of unrevoked keys. 404 for an unknown engagement or one of another production.',
        tags: ['admin'],
        params: IdParams,
        response: { 200: Engagement, ...errorResponses(404, 422) },
      },
    },
    async (request) => admin.oneEngagement(db(), principalOf(request).productionId, request.params.id),
  );

  routesOf(app).post(
    '/admin/engagements',
    {
      config: write,
      schema: {
        operationId: 'createEngagement',
        summary: 'Engage a vendor organisation',
        description:
          'Creates an engagement (source `admin`: a document sync never archives it). 409 when the ref already names anything in the production; 422 for an unknown organisation or department. ' +
          RECORDED,
        tags: ['admin'],
        body: NewEngagement,
        response: { 201: Engagement, ...errorResponses(400, 409, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<Engagement>(request, reply, { status: 201 }, (hooks) =>
        admin.addEngagement(db(), p.productionId, admin.actorOfPrincipal(p), request.body, hooks),
      );
    },
  );

  routesOf(app).post(
    '/admin/engagements/:id/archive',
    {
      config: write,
      schema: {
        operationId: 'archiveEngagement',
        summary: 'Archive an engagement',
        description:
          'The engagement reaches nothing from the next request on (its keys stay, reaching nothing, until revoked); it leaves every vendor answer. Archiving an archived engagement answers it unchanged. A document sync that still lists it leaves it archived. ' +
          RECORDED,
        tags: ['admin'],
        params: IdParams,
        response: { 200: Engagement, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<Engagement>(request, reply, { status: 200 }, (hooks) =>
        admin.archiveEngagement(db(), p.productionId, admin.actorOfPrincipal(p), request.params.id, hooks),
      );
    },
  );

  routesOf(app).get(
    '/admin/grants',
    {
      config: read,
      schema: {
        operationId: 'listGrants',
        summary: 'Grants: what each engagement reaches',
        description: 'Live grants by default (not revoked, not expired, target not retired).',
        tags: ['admin'],
        querystring: GrantQuery,
        response: { 200: Type.Array(Grant), ...errorResponses(422) },
      },
    },
    async (request) =>
      admin.listGrants(db(), principalOf(request).productionId, {
        engagementId: request.query.engagement_id,
        includeInactive: yes(request.query.include_inactive),
      }),
  );

  routesOf(app).post(
    '/admin/grants',
    {
      config: write,
      schema: {
        operationId: 'createGrant',
        summary:
          'Grant an engagement a scene, a character, a delivery (read or submit) or its own purchase orders',
        description:
          '`scene` and `character` name a live node of that kind (`node_id`); `delivery` names a live external delivery (`delivery_id`; an internal one, department to department, is 422) and an `access`; `own_po` names nothing. 422 names the field for anything missing, unknown, archived or in the past; 409 when the engagement already holds the same grant live. ' +
          RECORDED,
        tags: ['admin'],
        body: NewGrant,
        response: { 201: Grant, ...errorResponses(400, 409, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<Grant>(request, reply, { status: 201 }, (hooks) =>
        admin.addGrant(db(), p.productionId, admin.actorOfPrincipal(p), request.body, hooks),
      );
    },
  );

  routesOf(app).post(
    '/admin/grants/:id/revoke',
    {
      config: write,
      schema: {
        operationId: 'revokeGrant',
        summary: 'Revoke a grant',
        description:
          'Effective on the very next request. Revoking a revoked grant answers it unchanged. A document sync that still lists the grant leaves it revoked. ' +
          RECORDED,
        tags: ['admin'],
        params: IdParams,
        response: { 200: Grant, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<Grant>(request, reply, { status: 200 }, (hooks) =>
        admin.revokeGrant(db(), p.productionId, admin.actorOfPrincipal(p), request.params.id, hooks),
      );
    },
  );

  routesOf(app).get(
    '/admin/keys',
    {
      config: keyRead,
      schema: {
        operationId: 'listKeys',
        summary: "The production's API keys",
        description:
          'By prefix, never the token (which is not stored); revoked and expired keys too, each with its expiry and when it was last used. With `engagement_id`, only the keys bound to that engagement.',
        tags: ['admin'],
        querystring: KeyQuery,
        response: { 200: Type.Array(ApiKey), ...errorResponses(422) },
      },
    },
    async (request) =>
      admin.listKeys(db(), principalOf(request).productionId, { engagementId: request.query.engagement_id }),
  );

  routesOf(app).post(
    '/admin/keys',
    {
      config: { ...keyWrite, responseHeaders: NOT_CACHED(201) },
      schema: {
        operationId: 'createKey',
        summary: 'Mint an API key',
        description:
          "The token is in this answer once and never stored: keep it now. With an Idempotency-Key, a replay answers the same key with `token: null` (revoke it and mint another if the first answer was lost). A key bound to an engagement (a vendor key) defaults to `read` and can never hold `admin`. With `expires_at` the key is refused (401 `key_expired`) from that instant on; a vendor key minted without one gets the server's default lifetime when one is set. " +
          RECORDED,
        tags: ['admin'],
        body: NewKey,
        response: { 201: MintedKey, ...errorResponses(400, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<MintedKey>(
        request,
        reply,
        // the answer carries the token: no cache may keep it
        {
          status: 201,
          redact: (k) => ({ ...k, token: null }),
          headers: () => ({ 'cache-control': 'no-store' }),
        },
        (hooks) =>
          admin.mintKey(db(), p.productionId, admin.actorOfPrincipal(p), request.body, hooks, {
            vendorKeyDays: app.ctx.config.vendorKeyDays,
          }),
      );
    },
  );

  routesOf(app).post(
    '/admin/keys/:id/revoke',
    {
      config: keyWrite,
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke an API key',
        description:
          'The key is refused (401) from the very next request, its media tickets with it. Revoking a revoked key answers it unchanged. ' +
          RECORDED,
        tags: ['admin'],
        params: IdParams,
        response: { 200: ApiKey, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<ApiKey>(request, reply, { status: 200 }, (hooks) =>
        admin.revokeKey(db(), p.productionId, admin.actorOfPrincipal(p), request.params.id, hooks),
      );
    },
  );
}
