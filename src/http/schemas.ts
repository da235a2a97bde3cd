import { Type } from 'typebox';
import { ERROR_CODES } from '../errors.js';

/** Schema pieces shared by every route module. */

const CODE_TABLE = Object.entries(ERROR_CODES)
  .map(([code, meaning]) => `- \`${code}\`: ${meaning}`)
  .join('\n');

export const ErrorBody = Type.Object(
  {
    detail: Type.String({
      description: 'What went wrong, in one sentence, for people; a 422 starts with the field',
    }),
    code: Type.String({
      enum: Object.keys(ERROR_CODES),
      description: `Stable and machine-readable, for clients and agents to branch on (codes are only ever added):\n${CODE_TABLE}`,
    }),
    field: Type.Optional(
      Type.String({
        description:
          'On every 422, and only there: the field, parameter or header the detail starts with (`label`, `limit`, `scenes[3].number`, `Idempotency-Key`; `body`, `querystring` or `request` when the fault is the whole of it), so a client can point at it without parsing the detail',
      }),
    ),
  },
  {
    $id: 'ErrorBody',
    title: 'Error',
    examples: [{ detail: 'limit: must be >= 1', code: 'invalid_field', field: 'limit' }],
  },
);

/**
 * The media types of a stored file's bytes (the media routes' `produces`): whatever the file is.
 * Each answer's Content-Type is the type sniffed from the bytes when the file arrived (an image,
 * a video, audio, application/pdf, …; application/octet-stream when unrecognised), and a
 * submission may be any file, so no list short of "any type" would hold; generators map any
 * type with `format: binary` to a blob or a stream.
 */
export const FILE_MEDIA_TYPES = ['*/*'];

/** An error response: JSON whatever the route produces when it succeeds (a file route included). */
export const errorResponse = {
  description: 'Refused',
  content: { 'application/json': { schema: ErrorBody } },
};

export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [c, errorResponse]));

/** The request header of a route whose answer is cached (AnswerCache). */
export const ConditionalHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description:
        'One or more ETags (quoted, W/ weak forms accepted) or `*`; a match with the current answer answers 304 with no body',
    }),
  ),
});

export const NotModified = Type.Null({
  description: 'Not Modified: If-None-Match matched the current ETag; no body',
});

/** What a cached answer's route description says of its ETag, 304 and compression. */
export const KEPT_NOTE =
  'Kept in memory until the production changes: the answer carries an ETag (send it back in If-None-Match for a 304 with no body) and `Vary: Accept-Encoding`, and goes out gzip- or brotli-encoded when Accept-Encoding asks for it.';
