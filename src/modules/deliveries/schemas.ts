import { Type, type Static } from 'typebox';
import { APPROVAL_STATUSES, DELIVERY_KINDS, DELIVERY_STATUSES } from '../../domain/vocabulary.js';
import { pageQuery } from '../../http/paging.js';
import { CalendarDate, Nullable, RetiredAt, StringEnum, Timestamp } from '../../http/schemas.js';

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
    updated_at: Type.String({
      format: 'date-time',
      description: 'When the delivery or its gating approval last changed (the row shows both)',
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
        updated_at: '2026-11-23T19:02:11.483Z',
      },
    ],
  },
);

export const DeliveryListQuery = Type.Object(pageQuery('deliveries'));
export type Delivery = Static<typeof Delivery>;
