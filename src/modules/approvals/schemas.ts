import { Type, type Static } from 'typebox';
import { APPROVAL_MODES, APPROVAL_STATUSES } from '../../domain/vocabulary.js';
import { pageQuery } from '../../domain/schema-kit.js';
import { CalendarDate, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';

export const ApprovalStep = Type.Object(
  {
    position: Type.Integer({ minimum: 0, description: 'Index in the chain, from 0' }),
    person_id: Nullable(Type.Integer()),
    person_name: Nullable(Type.String()),
    role: Nullable(Type.String({ description: "The person's role" })),
    current: Type.Boolean({
      description: 'True for the one step awaiting a decision while the approval is pending',
    }),
    decision: Nullable(Type.String({ description: '`approved` or `changes` once decided, else null' })),
    decided_by: Nullable(Type.String({ description: 'Name the decision was recorded under' })),
    note: Nullable(Type.String()),
    decided_at: Nullable(Timestamp),
  },
  { $id: 'ApprovalStep', title: 'Approval step' },
);

export const ApprovalSubject = Type.Object(
  {
    node_id: Type.Integer(),
    label: Type.String(),
    kind: Type.String(),
    version_id: Nullable(Type.Integer({ description: 'Set when the subject is one version of the node' })),
    version: Nullable(Type.Integer()),
  },
  { $id: 'ApprovalSubject', title: 'Approval subject' },
);

export const ApprovalChain = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    mode: StringEnum(APPROVAL_MODES, {
      description: '`decision`: one named decider; `chain`: ordered steps, each a person',
    }),
    status: StringEnum(APPROVAL_STATUSES),
    due: Nullable(CalendarDate),
    department: Nullable(Type.String({ description: 'Department slug' })),
    subject: Nullable(ApprovalSubject),
    current_step: Nullable(
      Type.Integer({
        minimum: 0,
        description: 'Position of the step awaiting a decision while pending; null once settled',
      }),
    ),
    steps: Type.Array(ApprovalStep),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'ApprovalChain',
    title: 'Approval chain',
    examples: [
      {
        id: 1,
        title: 'Mara coat, episode 103 look v3',
        mode: 'chain',
        status: 'pending',
        due: '2026-11-24',
        department: 'costume',
        subject: { node_id: 20, label: 'Mara — duffle coat', kind: 'costume', version_id: 9, version: 3 },
        current_step: 1,
        steps: [
          {
            position: 0,
            person_id: 8,
            person_name: 'Ana Ruiz',
            role: 'Costume Designer',
            current: false,
            decision: 'approved',
            decided_by: 'Ana Ruiz',
            note: null,
            decided_at: '2026-11-20T09:12:00.000Z',
          },
          {
            position: 1,
            person_id: 3,
            person_name: 'Priya Raman',
            role: 'Block 1 Director',
            current: true,
            decision: null,
            decided_by: null,
            note: null,
            decided_at: null,
          },
        ],
        created_at: '2026-11-18T10:00:00.000Z',
        updated_at: '2026-11-23T19:02:11.483Z',
      },
    ],
  },
);
export type ApprovalChain = Static<typeof ApprovalChain>;

export const ApprovalListQuery = Type.Object({
  status: Type.Optional(StringEnum(APPROVAL_STATUSES, { description: 'Only approvals in this status' })),
  ...pageQuery('approvals'),
});
