import { Type, type Static } from 'typebox';

/*
 * A vendor organisation added without editing the production document, so a new vendor can be
 * engaged at once (POST /admin/engagements takes its id).
 */

export const ORGANISATION_NAME_MAX = 200;

export const NewOrganisation = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: ORGANISATION_NAME_MAX,
      description:
        'The company as people name it; stored trimmed. Unique in the production, compared case-insensitively after trimming ("Halide FX" and " halide fx " are one name)',
    }),
    ref: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
        description:
          'The document handle (letters, digits, `.`, `_`, `:`, `-`), unique across the whole production. Omitted: made from the name (`org-brand-new-vfx-co`, with `-2`, `-3`… when taken)',
      }),
    ),
  },
  { $id: 'NewOrganisation', title: 'New organisation', additionalProperties: false },
);
export type NewOrganisation = Static<typeof NewOrganisation>;
