import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../domain/schema-kit.js';
import { SCOPES } from '../../domain/vocabulary.js';

/** The key a request was made with, as its holder may know it (never the token). */
export const CallerKey = Type.Object(
  {
    id: Type.Integer(),
    prefix: Type.String({ description: 'The recognisable start of the token' }),
    label: Type.String(),
    scopes: Type.Array(StringEnum(SCOPES), { description: 'What the key may do, in the vocabulary’s order' }),
    production: Type.Object({ code: Type.String(), title: Type.String() }),
    engagement: Nullable(
      Type.Object(
        {
          id: Type.Integer(),
          ref: Nullable(Type.String()),
          organisation: Type.String({ description: 'The vendor organisation’s name' }),
        },
        { description: 'Set for a vendor key: every round-trip answer is clamped to this engagement' },
      ),
    ),
    person_name: Nullable(Type.String({ description: 'Writes are recorded under this person' })),
  },
  { $id: 'CallerKey', title: 'The calling key' },
);
export type CallerKey = Static<typeof CallerKey>;
