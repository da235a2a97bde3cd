import { Type, type Static } from 'typebox';
import { CONSOLE_ROLES } from '../../domain/vocabulary.js';
import { Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';

const Id = (description: string) => Type.Integer({ minimum: 1, maximum: 2_147_483_647, description });

export const IdParams = Type.Object({ id: Id('The object id') });

const Role = StringEnum(CONSOLE_ROLES, {
  description:
    '`admin`: everything, keys, webhooks, sign-in and sessions included; `coordinator`: everything but keys, webhooks, sign-in and sessions; `viewer`: reads',
});

export const LoginQuery = Type.Object({
  production: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The production to sign in to, when the person may sign in to several',
    }),
  ),
});

export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(
      Type.String({
        maxLength: 4096,
        description: "The provider's authorization code (exchanged once, never logged)",
      }),
    ),
    state: Type.Optional(
      Type.String({
        maxLength: 512,
        description: 'The state this server sent with the sign-in, checked against its cookie',
      }),
    ),
    error: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'The provider refused or the person cancelled (OAuth 2.0 error code)',
      }),
    ),
    error_description: Type.Optional(
      Type.String({ maxLength: 2048, description: "The provider's words for `error`" }),
    ),
    iss: Type.Optional(
      Type.String({
        maxLength: 2048,
        description: "The provider's issuer, checked against the configured one (RFC 9207)",
      }),
    ),
    session_state: Type.Optional(
      Type.String({ maxLength: 2048, description: "Some providers' session marker; accepted and ignored" }),
    ),
  },
  { additionalProperties: true },
);

export const SignInOptions = Type.Object(
  {
    identity_provider: Type.Boolean({
      description: "Signing in with the studio's identity provider is configured",
    }),
    signed_in: Type.Boolean({ description: "The request's session cookie holds a live console session" }),
  },
  { $id: 'SignInOptions', title: 'Sign-in options' },
);

export const Redirect = Type.Null({ description: 'A redirect: see `Location`' });

export const ConsoleSession = Type.Object(
  {
    id: Type.Integer(),
    role: Role,
    email: Type.String(),
    name: Type.String({
      description: "The production's person's name when the sign-in maps to one, else the provider's",
    }),
    person_id: Nullable(Type.Integer({ description: "The production's person the sign-in acts as" })),
    csrf_token: Type.String({
      description:
        'Send it as `X-CSRF-Token` with every write made with the session cookie; a write without it is 403 `csrf_refused`',
    }),
  },
  { $id: 'ConsoleSession', title: 'Console session (yours)' },
);
export type ConsoleSession = Static<typeof ConsoleSession>;

export const SessionSummary = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    name: Type.String(),
    role: Role,
    address: Nullable(Type.String({ description: 'The client address it signed in from' })),
    created_at: Timestamp,
    last_seen_at: Timestamp,
    expires_at: Type.String({
      format: 'date-time',
      description: 'Ends unless used before this (each use pushes it ahead)',
    }),
    ends_at: Type.String({ format: 'date-time', description: 'Ends at this however much it is used' }),
  },
  { $id: 'SessionSummary', title: 'Console session' },
);

export const AllowedPerson = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String({ description: 'Lower case; the address the identity provider vouches for' }),
    role: Role,
    person: Nullable(
      Type.Object(
        { id: Type.Integer(), ref: Nullable(Type.String()), name: Type.String() },
        {
          description: "The production's person everything done through this sign-in is recorded under",
        },
      ),
    ),
    created_at: Timestamp,
    created_by: Type.String(),
  },
  { $id: 'AllowedPerson', title: 'Person allowed to sign in' },
);
export type AllowedPerson = Static<typeof AllowedPerson>;

export const NewAllowedPerson = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    role: Role,
    person: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          "Ref of the production's person to act as; default: the production's person with this email, if exactly one",
      }),
    ),
  },
  { additionalProperties: false },
);
