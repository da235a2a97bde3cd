import { Type, type Static } from 'typebox';
import { ACCENTS, PRODUCTION_FORMATS } from '../../domain/vocabulary.js';
import { StringEnum } from '../../domain/schema-kit.js';

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
  {
    $id: 'Production',
    title: 'Production',
    examples: [
      {
        id: 1,
        title: 'Nightfall',
        logline: 'A night-shift nurse on the last open ward of a condemned Glasgow hospital…',
        status: 'active',
        phase: 'production',
        accent: 'indigo',
        format: 'episodic',
        season_number: 1,
        stats: { departments: 7, open_approvals: 4, deliveries_in_flight: 6, scenes: 13, nodes: 37 },
      },
    ],
  },
);

export type Production = Static<typeof Production>;
