import { Type, type Static } from 'typebox';
import { DELIVERY_STATUSES, REVIEW_DECISIONS, WORK_ITEM_STATUSES } from '../../domain/vocabulary.js';
import { pageQuery } from '../../domain/schema-kit.js';
import {
  CalendarDate,
  checkedWhereRead,
  Id,
  Nullable,
  RetiredAt,
  StringEnum,
  Timestamp,
} from '../../domain/schema-kit.js';

export const TurnoverListQuery = Type.Object(pageQuery('turnovers'));

export const SubmissionMedia = Type.Object({
  id: Type.Integer({ description: 'Media id: GET /media/{id} and /media/{id}/content' }),
  label: Type.String({ description: 'The file name as uploaded' }),
  kind: Type.String({ description: 'image, video, audio, document or file, from the bytes' }),
});

/** A submitted file as the submission list shows it: enough to fetch it and check the bytes. */
export const SubmissionFile = Type.Object(
  {
    ...SubmissionMedia.properties,
    content_type: Type.String({ description: 'Typed from the bytes when the file arrived' }),
    size: Type.Integer({ description: 'Bytes' }),
    sha256: Type.String({ description: 'SHA-256 of the bytes, hex' }),
  },
  { $id: 'SubmissionFile', title: 'Submitted file' },
);

/** What a submission answers: each file as the submission list shows it (its type, size and SHA-256). */
export const TurnoverSubmission = Type.Object(
  {
    id: Type.Integer({ description: 'Work item id' }),
    delivery_id: Type.Integer(),
    status: Type.Literal('submitted'),
    title: Type.String(),
    note: Type.String(),
    media: Type.Array(SubmissionFile, {
      description:
        'One media object per uploaded file, in upload order, as GET /submissions lists it: check the upload against `size` and `sha256`',
    }),
    created_at: Nullable(Timestamp),
  },
  { $id: 'TurnoverSubmission', title: 'Turnover submission' },
);

/** A file of a delivery's package (what the production sends): the same shape as a submitted file. */
export const DeliveryFile = Type.Object(
  { ...SubmissionFile.properties },
  { $id: 'DeliveryFile', title: 'Package file' },
);

/** The production's answer to a submission; null until it is reviewed. */
export const Review = Type.Object(
  {
    decision: StringEnum(REVIEW_DECISIONS),
    note: Type.String(),
    reviewed_by: Nullable(
      Type.String({ description: "Who reviewed it (a person's name, or the key's label)" }),
    ),
    reviewed_at: Timestamp,
  },
  { $id: 'Review', title: 'Review' },
);

/** One of this engagement's own submissions on a turnover, as its turnover row lists it. */
export const TurnoverOwnSubmission = Type.Object(
  {
    id: Type.Integer({ description: 'Work item id (GET /submissions lists it too, with its note)' }),
    status: StringEnum(WORK_ITEM_STATUSES, {
      description: "`submitted`, then the review's decision: `accepted` or `changes_requested`",
    }),
    title: Type.String(),
    created_at: Timestamp,
    media: Type.Array(SubmissionFile, {
      description: 'The files this engagement uploaded with it, in upload order: GET /media/{id}/content',
    }),
    review: Nullable(Review),
  },
  { $id: 'TurnoverOwnSubmission', title: 'Own submission on a turnover' },
);

export const TurnoverRow = Type.Object(
  {
    id: Type.Integer({ description: 'Delivery id' }),
    title: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    due: Type.Optional(Nullable(CalendarDate)),
    external_to: Type.Optional(
      Nullable(Type.String({ description: 'Receiving organisation; null on an internal delivery' })),
    ),
    spec: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Free-form entries' }),
    sent_at: Type.Optional(Nullable(Timestamp)),
    can_submit: Type.Boolean({
      description: "True only while this key's engagement holds a live submit grant on the delivery",
    }),
    package: Type.Array(DeliveryFile, {
      description:
        "The delivery's current files (the plates, EDL, reference, LUT…), in upload order, each fetched with GET /media/{id}/content and checked against its `sha256`. Shown only while the delivery is `sent` or `accepted`: a draft, ready or blocked delivery (and one recalled from `sent`) answers `[]`, so a package being prepared stays private. A file taken out of the package leaves the list (and its media id then answers 404 to the vendor).",
    }),
    submissions: Type.Array(TurnoverOwnSubmission, {
      description:
        "This engagement's own submissions on the delivery, oldest first, each with its files and the production's review. Another engagement's submissions are never listed, whatever the grants say.",
    }),
    updated_at: Type.String({
      format: 'date-time',
      description:
        "When the row last changed: the delivery, this engagement's grant on it, its package (while shown) or this engagement's submissions on it (a new one, a review)",
    }),
    retired_at: Type.Optional(RetiredAt),
  },
  {
    $id: 'TurnoverRow',
    title: 'Turnover row',
    examples: [
      {
        id: 1,
        title: 'Episode 101 plates, VFX turnover',
        status: 'sent',
        due: '2026-11-17',
        external_to: 'Pixelworks Ltd',
        spec: [{ format: 'EXR', colorspace: 'ACEScg' }],
        sent_at: '2026-11-17T15:20:00.000Z',
        can_submit: true,
        package: [
          {
            id: 311,
            label: 'ep101_sh010_plate.exr',
            kind: 'file',
            content_type: 'image/x-exr',
            size: 48213504,
            sha256: '5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef',
          },
        ],
        submissions: [
          {
            id: 42,
            status: 'changes_requested',
            title: 'sh010 comp v1',
            created_at: '2026-11-23T19:02:11.483Z',
            media: [
              {
                id: 318,
                label: 'sh010_comp_v1.mov',
                kind: 'video',
                content_type: 'video/quicktime',
                size: 91830272,
                sha256: '9b74c9897bac770ffc029102a200c5de1b1f7e25a4a9b0ca5ea5cb2ff6a5e5b2',
              },
            ],
            review: {
              decision: 'changes_requested',
              note: 'Edge matte chatters on frames 1012-1020',
              reviewed_by: 'Ada Okafor',
              reviewed_at: '2026-11-24T10:15:00.000Z',
            },
          },
        ],
        updated_at: '2026-11-24T10:15:00.000Z',
      },
    ],
  },
);

export const SubmissionRow = Type.Object(
  {
    id: Type.Integer({ description: 'Work item id' }),
    delivery_id: Type.Integer({ description: 'The turnover (delivery) it was submitted on' }),
    engagement_id: Nullable(Type.Integer({ description: 'The engagement that submitted it' })),
    status: StringEnum(WORK_ITEM_STATUSES, {
      description: "`submitted`, then the review's decision: `accepted` or `changes_requested`",
    }),
    title: Type.String(),
    note: Type.String(),
    media: Type.Array(SubmissionFile, {
      description: 'One media object per uploaded file, in upload order: GET /media/{id}/content',
    }),
    created_at: Timestamp,
    review: Nullable(Review),
    retired_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          "Only in an `updated_since` window: the submission left this key's list then (its delivery was retired)",
      }),
    ),
  },
  {
    $id: 'SubmissionRow',
    title: 'Submission row',
    examples: [
      {
        id: 7,
        delivery_id: 1,
        engagement_id: 2,
        status: 'submitted',
        title: 'Plates, reel 1',
        note: 'First pass',
        media: [
          {
            id: 41,
            label: 'sh010_comp_v001.exr',
            kind: 'image',
            content_type: 'image/x-exr',
            size: 48213,
            sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
          },
        ],
        created_at: '2026-11-23T19:02:11.483Z',
        review: {
          decision: 'changes_requested',
          note: 'Edge matte chatters on frames 1012-1020',
          reviewed_by: 'Ada Okafor',
          reviewed_at: '2026-11-24T10:15:00.000Z',
        },
      },
    ],
  },
);

export const SubmissionListQuery = Type.Object({
  delivery_id: Type.Optional(
    Id('Only the submissions on this delivery (one out of reach or unknown: an empty list)'),
  ),
  ...pageQuery('submissions'),
});

export const TurnoverParams = Type.Object({
  id: Id('Delivery id'),
});

export type TurnoverRow = Static<typeof TurnoverRow>;
export type TurnoverOwnSubmission = Static<typeof TurnoverOwnSubmission>;
export type TurnoverSubmission = Static<typeof TurnoverSubmission>;
export type SubmissionRow = Static<typeof SubmissionRow>;
export type DeliveryFile = Static<typeof DeliveryFile>;
export type Review = Static<typeof Review>;
export type SubmissionListQuery = Static<typeof SubmissionListQuery>;

/**
 * The multipart form, as the document states it (`files` required). The parts are streamed and
 * checked by the service as it reads them (so files are never buffered); the route validates an
 * empty stand-in body, so the schema is checked where it is read, not by the validator.
 */
export const SubmissionForm = {
  content: {
    'multipart/form-data': {
      schema: checkedWhereRead({
        type: 'object',
        required: ['files'],
        additionalProperties: false,
        properties: {
          files: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', format: 'binary' },
            description:
              'One or more file parts, each sent under the name `files`; each becomes its own media object. An empty file is 422.',
          },
          title: { type: 'string', maxLength: 500, description: "Defaults to the delivery's title" },
          note: { type: 'string', maxLength: 20000 },
        },
      }),
    },
  },
} as const;
