import { Type, type Static } from 'typebox';
import { WORK_ITEM_STATUSES } from '../../domain/vocabulary.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';
import { Engagement } from '../admin/schemas.js';
import { BundleEntry } from '../bundles/schemas.js';
import { PurchaseOrders } from '../purchase-orders/schemas.js';
import { Review, TurnoverRow } from '../turnovers/schemas.js';

/*
 * "See as vendor": what an engagement's keys are answered, computed by the round-trip services
 * themselves with that engagement as the caller. Nothing here restates a grant rule.
 */

export const ViewParams = Type.Object({ id: Id('The engagement') });

export const ViewBundleParams = Type.Object({
  id: Id('The engagement'),
  node_id: Id('The scene or character node, as the vendor would ask for it'),
});

export const ViewMediaParams = Type.Object({
  id: Id('The engagement'),
  media_id: Id('The media object, as the vendor would ask for it'),
});

const Submission = Type.Object({
  id: Type.Integer(),
  delivery_id: Type.Integer(),
  title: Type.String(),
  created_at: Timestamp,
  status: StringEnum(WORK_ITEM_STATUSES, {
    description: "`submitted`, then the review's decision: `accepted` or `changes_requested`",
  }),
  // The same shape as Review, without its $id: the turnover rows above embed Review itself, and
  // one answer's schema may hold a named schema only once.
  review: Nullable(Type.Object(Review.properties, { title: 'Review' })),
  media: Type.Array(
    Type.Object({
      id: Type.Integer({ description: 'Fetchable by the vendor: GET /api/v1/media/{id}' }),
      label: Type.String(),
      kind: Type.String(),
      content_type: Type.String(),
    }),
  ),
});

export const VendorView = Type.Object(
  {
    engagement: Engagement,
    reaches: Type.Boolean({
      description:
        'false for an archived engagement: its keys reach nothing at all, and every list here is empty',
    }),
    judged_at: Type.String({
      format: 'date-time',
      description:
        'When the grants were judged (expiry is judged at this instant, as for each vendor request)',
    }),
    bundles: Type.Array(BundleEntry, {
      description:
        'Exactly the vendor’s `GET /bundles`: the scenes, then the characters, whose bundles it is answered; `GET …/view/bundles/{kind}/{node_id}` shows each as the vendor gets it',
    }),
    turnovers: Type.Array(TurnoverRow, {
      description:
        'Exactly the vendor’s `GET /turnovers`: each delivery it is granted, with what that answer carries (its package once the delivery is sent)',
    }),
    purchase_orders: PurchaseOrders,
    submissions: Type.Array(Submission, {
      description:
        'What the engagement submitted on turnovers, newest first (at most 50), each with its review (null until reviewed): the vendor can fetch these media too',
    }),
  },
  { $id: 'VendorView', title: 'What a vendor sees' },
);
export type VendorView = Static<typeof VendorView>;
