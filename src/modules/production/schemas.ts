import { Type, type Static } from 'typebox';
import { ACCENTS, PRODUCTION_FORMATS } from '../../domain/vocabulary.js';
import { StringEnum } from '../../http/schemas.js';

const count = (description: string) => Type.Integer({ minimum: 0, description });

export const Production = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    logline: Type.String(),
    status: Type.String({ description: 'Open set: active, wrapped, archived, …' }),
    phase: Type.String({ description: 'Open set: development, prep, production, post, delivered, …' }),
    accent: StringEnum(ACCENTS, { description: 'Key into the curated palette, never a raw colour' }),
    format: StringEnum(PRODUCTION_FORMATS),
    season_number: Type.Optional(Type.Integer({ description: 'Present only when format is `episodic`' })),
    stats: Type.Object({
      departments: count('Departments of the production'),
      open_approvals: count('Approvals whose status is `pending`'),
      deliveries_in_flight: count('Deliveries past `draft` and not yet `accepted` (blocked, ready or sent)'),
      scenes: count('Scenes, omitted ones included (the rows of GET /scenes)'),
      nodes: count('Graph nodes: scenes plus every asset'),
    }),
  },
  { $id: 'Production', title: 'Production' },
);

export type Production = Static<typeof Production>;
