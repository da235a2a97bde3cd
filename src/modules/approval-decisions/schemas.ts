import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum } from '../../domain/schema-kit.js';

export const DECISIONS = ['approved', 'changes'] as const;
export type Decision = (typeof DECISIONS)[number];

export const ApprovalParams = Type.Object({ approval_id: Id('Approval id') });

export const DecideBody = Type.Object(
  {
    decision: StringEnum(DECISIONS, {
      description:
        '`approved` passes the current step; `changes` sends the approval back (`changes_requested`)',
    }),
    decided_by: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 200,
          description:
            "The person whose step it is, by name (case-insensitive) or by person id; the step records that person's name. " +
            "A key bound to a person decides as that person only: any other name is 403 (the step's person's included) and nothing is recorded; omitted, null or blank means the key's own person. " +
            "A key bound to no one (an integration): anyone but the step's person is 403, nothing recorded; omitted, null or blank is refused (422) on a `decision`-mode approval, and on a `chain` the step is recorded under the key's label.",
        }),
      ),
    ),
    note: Type.Optional(Nullable(Type.String({ maxLength: 10_000, description: 'Recorded on the step' }))),
    step: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Optional precondition (additive): the position of the step the caller means to decide. When the ' +
          'current step has moved on, the request is refused with 409 and nothing is recorded, so two ' +
          'clients deciding the same step of a chain never decide two steps.',
      }),
    ),
  },
  { $id: 'DecideBody', title: 'Decision', additionalProperties: false },
);
export type DecideBody = Static<typeof DecideBody>;
