import { Type, type Static } from 'typebox';
import { APPROVAL_STATUSES, DELIVERY_KINDS, DELIVERY_STATUSES } from '../../domain/vocabulary.js';
import { pageQuery } from '../../domain/schema-kit.js';
import { CalendarDate, Nullable, RetiredAt, StringEnum, Timestamp } from '../../domain/schema-kit.js';
import { DeliveryFile, SubmissionRow } from '../turnovers/schemas.js';

/** How many of a delivery's submissions its row carries (the newest); GET /submissions has them all. */
export const SUBMISSIONS_PER_DELIVERY = 20;

export const GatingApproval = Type.Object(
  {
    id: Type.Integer({ description: 'The approval id, as on GET /approvals' }),
    title: Type.String(),
    status: StringEnum(APPROVAL_STATUSES),
  },
  { $id: 'GatingApproval', title: 'Gating approval' },
);

export const Delivery = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    kind: StringEnum(DELIVERY_KINDS, {
      description: '`internal`: department to department; `external`: to an outside organisation',
    }),
    status: StringEnum(DELIVERY_STATUSES),
    due: Nullable(CalendarDate),
    from_department: Nullable(Type.String({ description: 'Slug of the sending department' })),
    to_department: Nullable(
      Type.String({ description: 'Slug of the receiving department (internal deliveries)' }),
    ),
    external_to: Nullable(Type.String({ description: 'Receiving organisation (external deliveries)' })),
    spec: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Free-form entries' }),
    sent_at: Nullable(Timestamp),
    gating_approval: Nullable(GatingApproval),
    package: Type.Array(DeliveryFile, {
      description:
        'The package: the files the production sends with the delivery (not those taken out), in upload order. Fetch each with GET /media/{id}/content. A vendor sees it on its turnover once the delivery is `sent` or `accepted`',
    }),
    submissions: Type.Array(SubmissionRow, {
      description: `The newest ${SUBMISSIONS_PER_DELIVERY} submissions made on the delivery, by every engagement, oldest first, each with its files and its review (\`GET /submissions?delivery_id=\` pages through them all)`,
    }),
    submissions_total: Type.Integer({
      minimum: 0,
      description: 'How many submissions the delivery has in all',
    }),
    updated_at: Type.String({
      format: 'date-time',
      description:
        'When the delivery (its status, its package), its gating approval or one of its submissions (a new one, a review) last changed: the row shows them all',
    }),
    retired_at: Type.Optional(RetiredAt),
  },
  {
    $id: 'Delivery',
    title: 'Delivery',
    examples: [
      {
        id: 1,
        title: 'Episode 101 plates, VFX turnover',
        kind: 'external',
        status: 'sent',
        due: '2026-11-17',
        from_department: 'editorial',
        to_department: null,
        external_to: 'Pixelworks Ltd',
        spec: [{ format: 'EXR', colorspace: 'ACEScg', handles: 12 }],
        sent_at: '2026-11-17T15:20:00.000Z',
        gating_approval: { id: 8, title: 'Episode 101 VFX turnover sign-off', status: 'approved' },
        package: [
          {
            id: 40,
            label: 'A001C003_plate.exr',
            kind: 'image',
            content_type: 'image/x-exr',
            size: 52_428_800,
            sha256: '2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae',
          },
        ],
        submissions: [],
        submissions_total: 0,
        updated_at: '2026-11-23T19:02:11.483Z',
      },
    ],
  },
);

export const DeliveryListQuery = Type.Object(pageQuery('deliveries'));
export type Delivery = Static<typeof Delivery>;
