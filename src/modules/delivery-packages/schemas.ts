import { Type, type Static } from 'typebox';
import { checkedWhereRead, Id } from '../../domain/schema-kit.js';
import { DeliveryFile } from '../turnovers/schemas.js';

/*
 * The production side of a turnover: what goes into a delivery's package. Admin scope; the
 * vendor sees the package through GET /turnovers once it is sent.
 */

export const DeliveryParams = Type.Object({ id: Id('Delivery id') });

export const PackageFileParams = Type.Object({
  id: Id('Delivery id'),
  media_id: Id('The package file (a media id from the package)'),
});

export const LABEL_MAX = 500;
export const PackageUpload = Type.Object(
  {
    delivery_id: Type.Integer(),
    files: Type.Array(DeliveryFile, {
      description: 'The files this request added, in the order they were sent (each its own media object)',
    }),
  },
  { $id: 'PackageUpload', title: 'Files added to a package' },
);
export type PackageUpload = Static<typeof PackageUpload>;

export const DeliveryPackage = Type.Object(
  {
    delivery_id: Type.Integer(),
    files: Type.Array(DeliveryFile, {
      description: 'The package as it is now (the files not taken out), in upload order',
    }),
  },
  { $id: 'DeliveryPackage', title: 'A delivery’s package' },
);
export type DeliveryPackage = Static<typeof DeliveryPackage>;

/**
 * The multipart form, as the document states it (`files` required). The parts are streamed and
 * checked by the service as it reads them (files are never buffered); the route validates an
 * empty stand-in body, so the schema is checked where it is read, not by the validator.
 */
export const PackageForm = {
  content: {
    'multipart/form-data': {
      schema: checkedWhereRead({
        type: 'object',
        required: ['files'],
        additionalProperties: false,
        description:
          'A `label` text part names the file part that follows it (label, file, label, file…); a file with no label before it takes its file name.',
        properties: {
          label: {
            type: 'array',
            items: { type: 'string', maxLength: LABEL_MAX },
            description:
              'Optional, one before each file it names: a file name (no `/` or `\\`), unique in the package',
          },
          files: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', format: 'binary' },
            description:
              'One or more file parts, each sent under the name `files`; each becomes its own media object in the package. An empty file is 422.',
          },
        },
      }),
    },
  },
} as const;
