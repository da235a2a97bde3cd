import { Type, type Static } from 'typebox';
import { DELIVERY_STATUSES } from '../../domain/vocabulary.js';
import { Id, StringEnum } from '../../domain/schema-kit.js';

// Where a delivery's status may move: admin scope.

export const DeliveryParams = Type.Object({ id: Id('Delivery id') });

export const STATUS_NOTE_MAX = 20_000;

export const StatusBody = Type.Object(
  {
    status: StringEnum(DELIVERY_STATUSES, { description: 'The status to move to' }),
    note: Type.Optional(
      Type.String({
        maxLength: STATUS_NOTE_MAX,
        description: 'Why (recorded in the activity feed with the move)',
      }),
    ),
  },
  { $id: 'DeliveryStatusChange', title: 'Delivery status change', additionalProperties: false },
);
export type StatusBody = Static<typeof StatusBody>;
