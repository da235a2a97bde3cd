import { Type, type Static } from 'typebox';
import { Timestamp } from '../../domain/schema-kit.js';

export const MediaTicket = Type.Object(
  {
    ticket: Type.String({
      description:
        'Opaque, HMAC-signed token; append as `?t=<ticket>` to any `media_path` the API returned (at the base URL, outside /api/v1)',
    }),
    expires_at: {
      ...Timestamp,
      description: 'The ticket stops working at this time (15 minutes after issue)',
    },
    production_id: Type.Integer({
      description: "The key's production: the only one whose media the ticket opens",
    }),
  },
  { $id: 'MediaTicket', title: 'Media ticket' },
);
export type MediaTicket = Static<typeof MediaTicket>;
