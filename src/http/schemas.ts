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

export { StringEnum, Nullable } from '../domain/schema-kit.js';

/** The largest id any table holds (a PostgreSQL `serial`): a larger one is refused before any query. */
export const MAX_ID = 2_147_483_647;

/**
 * An id taken from a request (path, query or body). Every route takes ids through this, so an id
 * beyond the column's range is 422 on both databases, never a database error.
 */
export const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: MAX_ID, ...(description ? { description } : {}) });

export const Timestamp = Type.String({ format: 'date-time', description: 'UTC ISO-8601' });
/** Beside every `media_path`: the same file by id, for keys that cannot take a media ticket (vendor keys). */
export const MediaId = Type.Union(
  [
    Type.Integer({
      description:
        'The media object: GET /api/v1/media/{media_id} (metadata) and /api/v1/media/{media_id}/content (bytes) with the same key, an engagement-bound key included',
    }),
    Type.Null(),
  ],
  { description: 'null when there is no file' },
);

/** On a list row only when `updated_since` brought back a row retired since: drop it from a mirror. */
export const RetiredAt = Type.String({
  format: 'date-time',
  description:
    'Present only on a row retired since `updated_since` (a re-import retired it): the row has left the production; drop it from a mirror. Never present without `updated_since`.',
});

export const CalendarDate = Type.String({ format: 'date', description: 'YYYY-MM-DD' });

/**
 * Marks a schema the document states but Fastify's validator does not enforce, because the
 * value is checked where it is read: a multipart form's parts as they stream (the upload routes
 * validate an empty stand-in body, the form being unread then), and each storage event on its
 * own (one bad event is listed in `refused` and never sinks its batch). The validator compiles a
 * marked schema as `{}` (validator.ts); the document leaves the keyword out.
 */
export const CHECKED_WHERE_READ = 'x-prodgraph-checked-where-read';

export const checkedWhereRead = <T extends object>(schema: T): T => ({
  ...schema,
  [CHECKED_WHERE_READ]: true,
});

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

/** The request header of a route whose answer is kept (src/http/answer-cache.ts). */
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

/** What a kept answer's route description says of its ETag, 304 and compression. */
export const KEPT_NOTE =
  'Kept in memory until the production changes: the answer carries an ETag (send it back in If-None-Match for a 304 with no body) and `Vary: Accept-Encoding`, and goes out gzip- or brotli-encoded when Accept-Encoding asks for it.';
