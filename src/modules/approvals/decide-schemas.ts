import { Type, type Static } from 'typebox';
import { APPROVAL_MODES, APPROVAL_STATUSES } from '../../domain/vocabulary.js';
import { Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

export const DECISIONS = ['approved', 'changes'] as const;
export type Decision = (typeof DECISIONS)[number];

export const ApprovalParams = Type.Object({ approval_id: Type.Integer({ minimum: 1 }) });

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
            "The person whose step it is, by name (case-insensitive) or by person id. Anyone else: 403, nothing recorded. The step records that person's name. Omitted, null or blank: refused (422) on a `decision`-mode approval; on a `chain` the step is recorded under the calling key's label.",
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

export const ApprovalStep = Type.Object(
  {
    position: Type.Integer({ minimum: 0, description: 'Order in the chain, from 0' }),
    person_id: Nullable(Type.Integer()),
    person: Nullable(Type.String({ description: 'Name of the person whose step it is' })),
    decision: Nullable(StringEnum(DECISIONS, { description: 'null while undecided' })),
    decided_by: Nullable(Type.String()),
    note: Nullable(Type.String()),
    decided_at: Nullable(Timestamp),
  },
  { $id: 'ApprovalStep', title: 'Approval step' },
);

export const ApprovalChain = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    mode: StringEnum(APPROVAL_MODES, {
      description: '`decision`: one named decider; `chain`: ordered steps, each a person',
    }),
    status: StringEnum(APPROVAL_STATUSES),
    due: Nullable(Type.String({ description: 'Calendar date' })),
    department: Nullable(Type.String({ description: 'Department slug' })),
    subject: Nullable(
      Type.Object(
        {
          node_id: Nullable(Type.Integer()),
          version_id: Nullable(Type.Integer({ description: 'Released when the approval becomes approved' })),
        },
        { description: 'What is being approved; null when the approval has no subject' },
      ),
    ),
    current_step: Type.Integer({
      minimum: 0,
      description: 'Position of the step awaiting a decision (of the deciding step once settled)',
    }),
    steps: Type.Array(ApprovalStep),
  },
  { $id: 'ApprovalChain', title: 'Approval chain' },
);
export type ApprovalChain = Static<typeof ApprovalChain>;
