import { Type, type Static } from 'typebox';
import { StringEnum, Timestamp } from '../../domain/schema-kit.js';

export const sessionTokenRequest = (models: readonly string[]) =>
  Type.Object(
    {
      model: Type.Optional(
        StringEnum([...models], {
          description: `The model the client token is limited to; default \`${models[0]}\``,
        }),
      ),
    },
    { additionalProperties: false, title: 'Session-token request' },
  );

export const SessionToken = Type.Object(
  {
    token: Type.String({
      description: "The provider's short-lived client token; send it to the provider, never back here",
    }),
    expires_at: Timestamp,
    model: Type.String({ description: 'The one model the token is limited to' }),
    provider: Type.String({ description: 'Which provider issued it (as configured)' }),
  },
  { $id: 'VisionSessionToken', title: 'Vision session token' },
);
export type SessionToken = Static<typeof SessionToken>;
