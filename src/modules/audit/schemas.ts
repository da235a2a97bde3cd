import { Type, type Static } from 'typebox';
import { MAX_PAGE } from '../../domain/page.js';
import { CursorParam } from '../../domain/schema-kit.js';
import { Nullable, StringEnum } from '../../domain/schema-kit.js';
import { AUDIT_OUTCOMES } from '../../auth/audit-actions.js';

export const DEFAULT_AUDIT_PAGE = 100;

export const AuditEvent = Type.Object(
  {
    id: Type.Integer(),
    at: Type.String({ format: 'date-time', description: "When, by the database's clock (UTC ISO-8601)" }),
    actor: Type.String({
      description:
        "Who, as people read it: a signed-in person (`Ana Ruiz <ana@studio.example> (console, coordinator)`), a key's person and label (`Ana Ruiz via Nuke publish`), a key's label, the operator at the CLI (`jo via prodgraph CLI`), or for a refused sign-in the email the identity provider gave",
    }),
    person_id: Nullable(
      Type.Integer({ description: 'The person acting, when the key or sign-in carries one' }),
    ),
    key_id: Nullable(Type.Integer()),
    key_prefix: Nullable(
      Type.String({ description: "The acting key's prefix (never its token); null at the CLI" }),
    ),
    key_label: Nullable(Type.String()),
    engagement_id: Nullable(
      Type.Integer({
        description:
          "The engagement concerned: the one the object belongs to (a grant's, a key's, a webhook's, a reviewed submission's), else the acting key's",
      }),
    ),
    action: Type.String({
      description:
        '`object.verb`: organisation.add, engagement.create, engagement.archive, grant.create, grant.revoke, key.mint, key.revoke, webhook.create, webhook.pause, webhook.resume, webhook.remove, delivery.status, package.file_add, package.file_remove, submission.review, media.download, package.download, session.sign_in, session.sign_out, session.refused, session.revoke, sign_in_person.allow, sign_in_person.change, sign_in_person.withdraw, signing_secret.rotate, access.refused (an open set: more are added, none renamed)',
    }),
    object_type: Nullable(
      Type.String({ description: 'What `object_id` names: grant, key, media, delivery, …' }),
    ),
    object_id: Nullable(Type.Integer()),
    summary: Type.String({ description: 'A line for people; never a token, ticket, cookie or secret' }),
    ip: Nullable(Type.String({ description: "The client's address (null at the CLI)" })),
    outcome: StringEnum(AUDIT_OUTCOMES, {
      description:
        '`ok`, or `refused` for an attempt turned down (a vendor key asking for media out of its reach)',
    }),
  },
  { $id: 'AuditEvent', title: 'Audit event' },
);
export type AuditEvent = Static<typeof AuditEvent>;

const Instant = (description: string) => Type.String({ format: 'date-time', description });

export const AuditQuery = Type.Object(
  {
    actor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "Only rows of this actor: a key's prefix, a key's label, or the actor as shown",
      }),
    ),
    engagement_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description: 'Only rows concerning this engagement',
      }),
    ),
    action: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 60,
        pattern: '^[a-z_]+(\\.[a-z_]+)?$',
        description: 'An action (`grant.create`), or a family of them (`grant`: every grant action)',
      }),
    ),
    object_type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 60,
        pattern: '^[a-z_]+$',
        description: 'Only rows on this kind of object',
      }),
    ),
    object_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description: 'Only rows on this object id (with `object_type`)',
      }),
    ),
    since: Type.Optional(Instant('ISO-8601 with a zone: only rows at or after it')),
    until: Type.Optional(Instant('ISO-8601 with a zone: only rows before it')),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `Rows per page, newest first: default ${DEFAULT_AUDIT_PAGE}, at most ${MAX_PAGE}; the Link header names the next (older) page`,
      }),
    ),
    cursor: Type.Optional(CursorParam),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;
