import { Type, type Static } from 'typebox';
import { PO_STATUSES } from '../../domain/vocabulary.js';
import { CalendarDate, Timestamp, Nullable, StringEnum } from '../../domain/schema-kit.js';

export const PurchaseOrder = Type.Object({
  id: Type.Integer(),
  department_id: Nullable(
    Type.Integer({ description: 'Never null here: production-wide commitments are not returned' }),
  ),
  account: Type.String(),
  vendor: Type.String({ description: "The vendor organisation's name" }),
  description: Type.String(),
  amount: Type.Number(),
  status: StringEnum(PO_STATUSES),
  date: CalendarDate,
  updated_at: Type.Optional(Timestamp),
});

export const CostLine = Type.Object(
  {
    account: Type.String(),
    description: Type.Optional(Nullable(Type.String())),
    budget: Type.Optional(Nullable(Type.Number())),
    actual: Type.Optional(Nullable(Type.Number())),
    committed: Type.Optional(Nullable(Type.Number())),
  },
  { additionalProperties: true },
);

export const PurchaseOrders = Type.Object(
  {
    purchase_orders: Type.Array(PurchaseOrder, {
      description: "The vendor's own purchase orders with a department, oldest first",
    }),
    line: Type.Array(CostLine, {
      description:
        "Lines of the active weekly cost report whose account is one of the accounts of the engagement's departments, in report order",
    }),
    week_of: Nullable(
      Type.String({
        format: 'date',
        description: 'Week of the active cost report; null when none or no money grant',
      }),
    ),
  },
  { $id: 'PurchaseOrders', title: 'Purchase orders response' },
);

export type PurchaseOrders = Static<typeof PurchaseOrders>;
