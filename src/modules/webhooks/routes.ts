import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../auth/route-hook.js';
import { respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { actorOfPrincipal } from '../admin/service.js';
import { CreatedWebhook, Delivery, DeliveryQuery, NewWebhook, Webhook, WebhookParams } from './schemas.js';
import * as webhooks from './service.js';
import { routesOf } from '../../http/define-route.js';

// credentials: a signed-in coordinator may not manage webhooks (their secrets sign deliveries)
const read = { auth: { scopes: ['admin'], surface: 'production', credentials: true } } as const;
const write = { ...read, idempotent: true } as const;

const DELIVERY =
  'Each change of the production (the entries of `GET /changes`) is POSTed to the URL as JSON `{webhook_id, production, change}`, signed in the `Prodgraph-Signature` header (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>`; the README shows how to check it) and named by `Prodgraph-Delivery` (the same for every attempt at one change: use it to drop repeats). ' +
  'One change at a time, in commit order; a 2xx within the timeout moves on, anything else is retried with exponential backoff (1 s, 2 s, 4 s, … up to an hour) until it succeeds: at least once, never skipped. Subscriptions are delivered independently, so a slow or dead receiver delays only its own.';

const ENGAGEMENT_DELIVERY =
  'An **engagement webhook** (`engagement_id` set) is sent only what that engagement can see, judged through its grants when each change is delivered (a grant revoked before then already counts), with `engagement_id` in the body and `actor` always null: ' +
  '`delivery` changes of a turnover it holds a live read or submit grant on (a status move: sent, recalled, accepted; or any other edit of the row it sees; or its retirement by a re-import), to be read with GET /turnovers; ' +
  "`media` changes of a file of such a delivery's package while the delivery is sent or accepted (`created`: added; `updated`: taken out, after which the id answers 404), and of the files it submitted itself; " +
  '`submission` changes of its own submissions (made, or reviewed: GET /turnovers or GET /submissions carry the review); ' +
  "`grant` changes of its own grants (`created`, `updated`, `retired` when revoked) and `expired` when one lapses: the worker watches the engagement's next expiry and announces it within about a second of `expires_at` passing (at `at` = `expires_at`; `Prodgraph-Delivery` is `<webhook>.expired.<grant>.<expiry in unix ms>`). " +
  "Nothing else: no scene, asset or version changes (keep bundles fresh with their ETags), no other engagement's objects, no titles. An archived engagement is told nothing. `kinds`, if given, must be among `delivery`, `media`, `submission`, `grant`.";

export async function webhookRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.ctx.db;

  routesOf(app).get(
    '/admin/webhooks',
    {
      config: read,
      schema: {
        operationId: 'listWebhooks',
        summary: "The production's webhook subscriptions",
        description:
          'Never with their secrets; `engagement_id` names the engagement an engagement webhook is for. ' +
          DELIVERY,
        tags: ['admin'],
        response: { 200: Type.Array(Webhook) },
      },
    },
    async (request) => webhooks.listWebhooks(db(), principalOf(request).productionId),
  );

  routesOf(app).post(
    '/admin/webhooks',
    {
      config: write,
      schema: {
        operationId: 'createWebhook',
        summary: 'Subscribe a URL to the production’s changes',
        description:
          'The answer carries the signing `secret` this once: keep it now. Delivery starts with the next change (or after `after`, a change feed cursor, to replay history). Recorded in the activity feed. With `engagement_id`, the webhook is for that engagement: a vendor is pushed exactly its own reach (below); an unknown or archived engagement, or `kinds` an engagement is never told of, is 422. ' +
          DELIVERY +
          ' ' +
          ENGAGEMENT_DELIVERY,
        tags: ['admin'],
        body: NewWebhook,
        response: { 201: CreatedWebhook, ...errorResponses(400, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<CreatedWebhook>(
        request,
        reply,
        { status: 201, redact: (w) => ({ ...w, secret: null }) },
        (hooks) => webhooks.addWebhook(db(), p.productionId, actorOfPrincipal(p), request.body, hooks),
      );
    },
  );

  for (const [verb, active] of [
    ['pause', false],
    ['resume', true],
  ] as const) {
    routesOf(app).post(
      `/admin/webhooks/:id/${verb}`,
      {
        config: write,
        schema: {
          operationId: `${verb}Webhook`,
          summary: active ? 'Resume a paused webhook subscription' : 'Pause a webhook subscription',
          description: active
            ? 'Delivery picks up where it stopped, with every change made while paused, and a receiver that was failing is retried at once. Resuming an active subscription answers it unchanged. Recorded in the activity feed.'
            : 'Nothing more is sent until it is resumed; changes are kept for it, not skipped. Pausing a paused subscription answers it unchanged. Recorded in the activity feed.',
          tags: ['admin'],
          params: WebhookParams,
          response: { 200: Webhook, ...errorResponses(404, 422) },
        },
      },
      async (request, reply) => {
        const p = principalOf(request);
        return respondToWrite<Webhook>(request, reply, { status: 200 }, (hooks) =>
          webhooks.setWebhookActive(
            db(),
            p.productionId,
            actorOfPrincipal(p),
            request.params.id,
            active,
            hooks,
          ),
        );
      },
    );
  }

  routesOf(app).post(
    '/admin/webhooks/:id/remove',
    {
      config: write,
      schema: {
        operationId: 'removeWebhook',
        summary: 'Remove a webhook subscription',
        description:
          'Deliveries stop (an attempt in flight may still arrive) and its delivery log goes with it; answers the subscription as it was. Recorded in the activity feed.',
        tags: ['admin'],
        params: WebhookParams,
        response: { 200: Webhook, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      return respondToWrite<Webhook>(request, reply, { status: 200 }, (hooks) =>
        webhooks.removeWebhook(db(), p.productionId, actorOfPrincipal(p), request.params.id, hooks),
      );
    },
  );

  routesOf(app).get(
    '/admin/webhooks/:id/deliveries',
    {
      config: read,
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'A webhook subscription’s delivery log, newest first',
        description:
          'Every attempt: the change, the receiver’s status or why none came, how long it took. The newest 1,000 attempts of each subscription are kept.',
        tags: ['admin'],
        params: WebhookParams,
        querystring: DeliveryQuery,
        response: { 200: Type.Array(Delivery), ...errorResponses(404, 422) },
      },
    },
    async (request) =>
      webhooks.listDeliveries(
        db(),
        principalOf(request).productionId,
        request.params.id,
        request.query.limit,
      ),
  );
}
