import { Type, type Static } from 'typebox';
import { checkedWhereRead } from '../../domain/schema-kit.js';
import { Filespace } from '../storage-library/schemas.js';

export const MediaProxyJson = Type.Object(
  {
    filespace: Filespace,
    path: Type.String({
      description: 'Library path of the file the image stands in for (a live library row)',
    }),
    bytes: Type.String({
      contentEncoding: 'base64',
      description: 'The JPEG, base64 (standard alphabet; line breaks allowed). At most 8 MiB once decoded.',
    }),
  },
  { $id: 'MediaProxyJson', title: 'Media proxy (JSON form)', additionalProperties: false },
);
export type MediaProxyJson = Static<typeof MediaProxyJson>;

/** The same request as a form: the route reads the parts as they stream (checked where read). */
export const MediaProxyForm = checkedWhereRead(
  Type.Object(
    {
      filespace: Filespace,
      path: MediaProxyJson.properties.path,
      file: Type.Unsafe<unknown>({
        type: 'string',
        format: 'binary',
        description: 'The JPEG itself, at most 8 MiB (read up to the limit and no further)',
      }),
    },
    { title: 'Media proxy (multipart form)', additionalProperties: false },
  ),
);

export const MediaProxyResult = Type.Object(
  {
    ok: Type.Boolean(),
    media_path: Type.String({
      description: 'Where the stored proxy is served: the off-plane file route `/media/{path}?t=<ticket>`',
    }),
    bytes: Type.Integer({ description: 'Size in bytes of the stored (re-encoded) JPEG' }),
  },
  { $id: 'MediaProxyResult', title: 'Media proxy result' },
);
export type MediaProxyResult = Static<typeof MediaProxyResult>;
