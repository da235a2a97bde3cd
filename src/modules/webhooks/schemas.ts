import { Type, type Static } from 'typebox';
import { CHANGE_KINDS } from '../../db/change-log.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';

/*
 * Webhook subscriptions: each change of the production (the change feed's entries) POSTed to
 * a URL, signed with the subscription's secret. Managed by administrators (admin API, CLI).
 */

export const WebhookParams = Type.Object({ id: Id('The webhook subscription id') });

const Kinds = Type.Array(StringEnum(CHANGE_KINDS), {
  minItems: 1,
  maxItems: CHANGE_KINDS.length,
  uniqueItems: true,
  description: 'Deliver only changes of these kinds (the change feed’s `kind`); absent or null: every kind',
});

export const Webhook = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String({ description: 'Where each change is POSTed' }),
    kinds: Nullable(Kinds),
    active: Type.Boolean({
      description: 'false: paused; changes wait (none are skipped) until it is resumed',
    }),
    cursor: Type.String({
      description:
        'The change feed cursor it has delivered up to: deliveries resume after it, across restarts',
    }),
    failures: Type.Integer({ minimum: 0, description: 'Failed attempts in a row at the change it is on' }),
    next_attempt_at: Nullable(Timestamp),
    last_error: Nullable(Type.String({ description: 'Why the last failed attempt failed' })),
    last_delivered_at: Nullable(Timestamp),
    created_at: Timestamp,
    created_by: Type.String(),
    engagement_id: Nullable(
      Type.Integer({
        description:
          'Set: an engagement webhook, sent only what that engagement can see (see POST /admin/webhooks); null: every change of the production',
      }),
    ),
  },
  { $id: 'Webhook', title: 'Webhook subscription' },
);
export type Webhook = Static<typeof Webhook>;

export const NewWebhook = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'An absolute http:// or https:// URL without user or password',
    }),
    kinds: Type.Optional(Nullable(Kinds)),
    after: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Start delivering after this change feed cursor (to replay history); default `now`: changes from now on',
      }),
    ),
    engagement_id: Type.Optional(
      Nullable(
        Id(
          "Subscribe for this engagement: the webhook is sent only what the engagement's own keys can see (its turnovers, their sent packages, its own submissions and their reviews, its own grants and their expiry). An unknown or archived engagement is 422. Absent or null: every change of the production",
        ),
      ),
    ),
  },
  { $id: 'NewWebhook', title: 'New webhook subscription', additionalProperties: false },
);
export type NewWebhook = Static<typeof NewWebhook>;

export const CreatedWebhook = Type.Object(
  {
    ...Webhook.properties,
    secret: Nullable(
      Type.String({
        description:
          'Signs every delivery (see the README, "Webhooks"). Shown this once: list answers never carry it, and an Idempotency-Key replay answers null here.',
      }),
    ),
  },
  { $id: 'CreatedWebhook', title: 'Created webhook subscription' },
);
export type CreatedWebhook = Static<typeof CreatedWebhook>;

export const DeliveryQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: 50,
        description: 'How many attempts, newest first: default 50; above 200 is clamped to 200',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    id: Type.Integer(),
    at: Timestamp,
    change: Type.Object({
      cursor: Type.String(),
      kind: Nullable(Type.String()),
      id: Nullable(Type.Integer()),
      op: Nullable(Type.String()),
    }),
    attempt: Type.Integer({ minimum: 1, description: 'Which attempt at this change' }),
    delivered: Type.Boolean({ description: 'The receiver answered 2xx' }),
    status_code: Nullable(Type.Integer({ description: 'The receiver’s HTTP status; null when none came' })),
    error: Nullable(
      Type.String({
        description:
          'Why it failed: the status the receiver answered; `no answer within N ms` however a ' +
          'connection failed (refused, reset, unresolved or silent: the log does not tell them apart); ' +
          'or an address webhooks may not reach',
      }),
    ),
    duration_ms: Type.Integer({
      minimum: 0,
      description:
        'How long the receiver took to answer, in milliseconds. When no HTTP answer came it reads ' +
        'as the timeout (PRODGRAPH_WEBHOOK_TIMEOUT_MS) whatever happened, and the attempt is ' +
        'recorded once that time has passed, so a closed port and a silent one look the same; ' +
        '0 when the address is one webhooks may not reach (refused before connecting)',
    }),
  },
  { $id: 'WebhookDelivery', title: 'Webhook delivery attempt' },
);
export type Delivery = Static<typeof Delivery>;

/** What a receiver gets, the body of each POST. */
export const WebhookEvent = Type.Object(
  {
    webhook_id: Type.Integer(),
    production: Type.String({ description: 'The production code' }),
    engagement_id: Type.Optional(
      Type.Integer({ description: 'Only on an engagement webhook: the engagement it is sent for' }),
    ),
    change: Type.Object({
      cursor: Type.String(),
      at: Timestamp,
      kind: Type.String(),
      id: Type.Integer(),
      op: Type.String({
        description:
          '`created`, `updated` or `retired` (as the change feed); on an engagement webhook also `expired`: a grant of the engagement lapsed at `at`',
      }),
      actor: Nullable(
        Type.String({ description: 'Who made the change; always null on an engagement webhook' }),
      ),
    }),
  },
  { $id: 'WebhookEvent', title: 'Webhook delivery body' },
);
export type WebhookEvent = Static<typeof WebhookEvent>;
