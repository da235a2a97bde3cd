import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';
import { HUE_FAMILY_NAMES } from './look/colour.js';

/** The allowed models are configured, so the request schema is built from the config. */
export const LookParams = Type.Object({
  version_id: Id('A released version id'),
});

const share = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });

export const PaletteColour = Type.Object(
  {
    hex: Type.String({ pattern: '^#[0-9a-f]{6}$', description: 'sRGB, lower case' }),
    share: share('Fraction of the frame; shares sum to 1'),
    name: Type.String({ description: 'Nearest plain colour name from a fixed table of 25' }),
  },
  { $id: 'PaletteColour', title: 'Palette colour' },
);

export const LookBrief = Type.Object(
  {
    version_id: Type.Integer(),
    node_id: Type.Integer({ description: 'The asset the version belongs to' }),
    label: Type.String({ description: "The asset's label" }),
    version: Type.Integer({ description: "The version's number within its asset" }),
    image: Type.Object({
      width: Type.Integer({ description: 'Pixels, after EXIF orientation' }),
      height: Type.Integer(),
      aspect_ratio: Type.Number({ description: 'width / height, 3 places' }),
    }),
    palette: Type.Array(PaletteColour, {
      minItems: 1,
      maxItems: 8,
      description:
        'Dominant colours, biggest share first. Up to 8 (5–8 for a photographic still); fewer only when ' +
        'the frame holds fewer distinct colours: colours a viewer cannot tell apart (ΔE76 < 5) are one ' +
        'colour, and specks under 0.5 % of the frame add their share to the nearest colour.',
    }),
    exposure: Type.Object({
      mean_luma: Type.Number({ minimum: 0, maximum: 1, description: 'Mean Rec. 709 luma of the sRGB image' }),
      key: StringEnum(['low', 'mid', 'high'], {
        description: 'low under 0.30 mean luma, high over 0.62, mid between',
      }),
      contrast: Type.Number({
        minimum: 0,
        maximum: 0.5,
        description: 'RMS contrast: standard deviation of luma',
      }),
      clipped_highlights: share('Fraction of the frame at or above 0.98 luma'),
      crushed_shadows: share('Fraction of the frame at or below 0.02 luma'),
    }),
    colour: Type.Object({
      saturation: share('Mean chroma (max − min of R, G, B): 0 grey, 1 pure colour'),
      warmth: StringEnum(['warm', 'neutral', 'cool'], {
        description: 'From the mean red − blue balance: warm above +0.05, cool below −0.05',
      }),
      dominant_hue: Nullable(
        StringEnum(HUE_FAMILY_NAMES, {
          description: 'The hue family carrying the most chroma; null for an effectively grey frame',
        }),
      ),
    }),
    summary: Type.String({ description: 'One plain sentence built from the figures' }),
    method: Type.String({
      description: 'Algorithm and version; a brief made by another method is computed again',
    }),
    generated_at: Timestamp,
  },
  { $id: 'LookBrief', title: 'Look brief' },
);
export type LookBrief = Static<typeof LookBrief>;
