import { Type, type Static } from 'typebox';
import { REVIEW_DECISIONS } from '../../domain/vocabulary.js';
import { Id, Nullable, StringEnum } from '../../domain/schema-kit.js';

export const REVIEW_NOTE_MAX = 20_000;

export const SubmissionParams = Type.Object({ id: Id('Submission (work item) id') });

export const ReviewBody = Type.Object(
  {
    decision: StringEnum(REVIEW_DECISIONS, {
      description: '`accepted`, or `changes_requested` (the vendor is asked to submit again)',
    }),
    note: Type.String({
      maxLength: REVIEW_NOTE_MAX,
      description:
        'What the vendor reads with the decision; required, and must not be blank when asking for changes (say what to change)',
    }),
    reviewed_by: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 200,
          description:
            "A person of the production, by name (case-insensitive) or by person id; the review records that person's name. " +
            'A key bound to a person reviews as that person only: naming anyone else is 403 and nothing is recorded; omitted, null or blank means its own person. ' +
            "A key bound to no one: omitted, null or blank records the key's label.",
        }),
      ),
    ),
    accept_delivery: Type.Optional(
      Type.Boolean({
        description:
          'With `accepted`: also move the delivery from `sent` to `accepted`, in the same write (409 `invalid_transition` when the delivery is not `sent`; nothing is recorded). Default false: accepting a submission never accepts the delivery by itself',
      }),
    ),
  },
  { $id: 'SubmissionReview', title: 'Submission review', additionalProperties: false },
);
export type ReviewBody = Static<typeof ReviewBody>;
