import type { AssetKind } from './plan.js';
import { nth } from './random.js';

/** Word lists the generated production is written from; labels are picked by position. */

export const FIRST_NAMES = [
  'Mara',
  'Agnes',
  'Tomas',
  'Iris',
  'Callum',
  'Niamh',
  'Ruth',
  'Dev',
  'Esther',
  'Jonah',
  'Priya',
  'Hugo',
  'Leona',
  'Finn',
  'Saoirse',
  'Omar',
  'Greta',
  'Ewan',
  'Ada',
  'Kofi',
  'Ines',
  'Rory',
  'Yusuf',
  'Maud',
  'Felix',
  'Noor',
  'Isla',
  'Bram',
  'Cora',
  'Dara',
  'Elsie',
  'Gil',
  'Hana',
  'Ivo',
  'Juno',
  'Kit',
];
export const LAST_NAMES = [
  'Haldane',
  'Ruiz',
  'Okafor',
  'Marsh',
  'Lindqvist',
  'Achebe',
  'Doyle',
  'Farrow',
  'Grieve',
  'Hollis',
  'Imrie',
  'Kerr',
  'Laird',
  'Munro',
  'Nakamura',
  'Oduya',
  'Pryce',
  'Quigley',
  'Rennie',
  'Sallis',
  'Tannahill',
  'Ure',
  'Vass',
  'Wishart',
  'Yates',
  'Zielinska',
  'Baird',
  'Cowan',
  'Drummond',
  'Erskine',
];

const PLACES = [
  'Ward 9',
  'Long Corridor',
  'Mortuary',
  'Boiler Room',
  'Nurses Station',
  'Car Park',
  'Chapel',
  'Laundry',
  'Records Office',
  'Stairwell B',
  'Canteen',
  'Roof',
  'Day Room',
  'Porters Lodge',
  'X-Ray Suite',
  'Tenement Close',
  'Riverside Path',
  'Bus Depot',
  'Police Station',
  'Allotments',
  'Ferry Terminal',
];
const PLACE_QUALIFIERS = ['', 'Upper ', 'Old ', 'East ', 'West ', 'North ', 'Lower ', 'New '];
const PROP_NOUNS = [
  'Lantern',
  'Fob Watch',
  'Clipboard',
  'Wheelchair',
  'Drip Stand',
  'Key Ring',
  'Thermos',
  'Torch',
  'Case File',
  'Radio',
  'Stretcher',
  'Ledger',
  'Telephone',
  'Pager',
  'Umbrella',
  'Rosary',
  'Photograph',
  'Syringe Tray',
  'Mop Bucket',
  'Bedpan',
  'Filing Cabinet',
  'Typewriter',
  'Ashtray',
  'Medal',
];
const PROP_QUALIFIERS = ['Brass', 'Battered', 'Hero', 'Stunt', 'Period', 'Rusted', 'Spare', 'Breakaway'];
const VEHICLES = ['Ambulance', 'Police Car', 'Night Bus', 'Hearse', 'Taxi', 'Delivery Van', 'Motorbike'];
const COSTUME_PIECES = ['Coat', 'Uniform', 'Night Look', 'Funeral Black', 'Scrubs', 'Day Look', 'Raincoat'];
const OTHER_KINDS = ['creature', 'sfx-rig', 'prosthetic', 'stunt-rig', 'asset'] as const;
const OTHER_NOUNS = ['Returned Patient', 'Rain Rig', 'Burn Piece', 'Fall Rig', 'Smoke Unit', 'Light Shift'];

export const TIMES_OF_DAY = ['DAY', 'NIGHT', 'NIGHT', 'DAWN', 'DUSK', 'CONTINUOUS'];
export const FABRICS = ['Black wool', 'Navy gabardine', 'Grey flannel', 'White cotton', 'Oilcloth', 'Tweed'];
export const INGREDIENT_KINDS = ['fabric', 'trim', 'accessory', 'reference', 'swatch'];
export const RELATIONS = ['primary', 'lining', 'detail', 'reference', null];
export const VERBS = ['released', 'noted', 'uploaded', 'approved', 'moved', 'created', 'scheduled'];
export const MODELS = ['image-standard', 'image-fast', 'video-standard'];
export const PROMPTS = [
  'Night ward, sodium light through tall windows, empty beds',
  'Wet wool coat, hospital car park at dawn',
  'Corridor that lengthens as the camera tracks',
  'Fob watch stopped at three, engraved',
  'Porter pushing an empty trolley, locked off',
];
export const SPEC_FORMATS = [
  { format: 'EXR', colorspace: 'ACEScg', handles: 12 },
  { format: 'ProRes 4444', colorspace: 'Rec.709' },
  { format: 'DPX', colorspace: 'LogC3', handles: 8 },
  { format: 'JPEG', colorspace: 'sRGB', long_edge: 2048 },
  { format: 'WAV', sample_rate: 48000, bit_depth: 24 },
];

/** A person's (or a character's) name: every first name with every last name, then numbered. */
export function personName(i: number): string {
  const f = nth(FIRST_NAMES, i);
  const l = nth(LAST_NAMES, Math.floor(i / FIRST_NAMES.length));
  const round = Math.floor(i / (FIRST_NAMES.length * LAST_NAMES.length));
  return round === 0 ? `${f} ${l}` : `${f} ${l} ${round + 1}`;
}

const numbered = (label: string, i: number, span: number) =>
  i < span ? label : `${label} #${Math.floor(i / span) + 1}`;

/** The label of the i-th asset of a kind (costume i belongs to the character i / per). */
export function assetLabel(kind: AssetKind, i: number, costumesPerCharacter: number): string {
  switch (kind) {
    case 'character':
      // characters are offset from crew names so a character is never named like a crew member
      return personName(i + 500);
    case 'costume':
      return `${personName(Math.floor(i / costumesPerCharacter) + 500)}: ${nth(COSTUME_PIECES, i)}`;
    case 'location':
      return numbered(
        `${nth(PLACE_QUALIFIERS, Math.floor(i / PLACES.length))}${nth(PLACES, i)}`,
        i,
        PLACES.length * 8,
      );
    case 'set':
      return numbered(`${nth(PLACES, i)} (stage build)`, i, PLACES.length);
    case 'prop':
      return numbered(
        `${nth(PROP_QUALIFIERS, Math.floor(i / PROP_NOUNS.length))} ${nth(PROP_NOUNS, i)}`,
        i,
        PROP_NOUNS.length * 8,
      );
    case 'vehicle':
      return numbered(nth(VEHICLES, i), i, VEHICLES.length);
    case 'other':
      return numbered(nth(OTHER_NOUNS, i), i, OTHER_NOUNS.length);
  }
}

/** The document `kind` of an asset; "other" assets spread over a few open-set kinds. */
export function assetKindName(kind: AssetKind, i: number): string {
  return kind === 'other' ? nth(OTHER_KINDS, i) : kind;
}

export const placeName = (i: number) => nth(PLACES, i).toUpperCase();
