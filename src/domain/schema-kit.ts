import { Type, type TSchema } from 'typebox';
import { MAX_PAGE } from './page.js';

/**
 * The pieces every module's TypeBox schemas are built from, whatever the transport: the HTTP
 * layer, MCP and the OpenAPI document derive from the modules' schemas, never the reverse.
 */

/** A closed vocabulary as a plain `enum`: one clear validation message, typed as the union. */
export const StringEnum = <T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

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
 * marked schema as `{}`; the document leaves the keyword out.
 */
export const CHECKED_WHERE_READ = 'x-prodgraph-checked-where-read';

export const checkedWhereRead = <T extends object>(schema: T): T => ({
  ...schema,
  [CHECKED_WHERE_READ]: true,
});

export const CursorParam = Type.String({
  minLength: 1,
  maxLength: 1000,
  description:
    'Opaque: the `cursor` of the `Link: <…>; rel="next"` header of the previous page. Valid only with the same filters on the same list; anything else is 422.',
});

export const UpdatedSinceParam = Type.String({
  format: 'date-time',
  description:
    'ISO-8601 date-time with a zone (`2026-11-23T10:00:00Z`): only rows changed after it, rows retired since included (they carry `retired_at`), so a mirror can drop them. Anything else is 422.',
});

/** `limit` + `cursor` + `updated_since` for the lists that page only when asked to. */
export const pageQuery = (what: string) => ({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Page size: at most this many ${what}, the next page named by the Link header. Without it the whole list is answered (as before paging). Above ${MAX_PAGE} is clamped to ${MAX_PAGE}; below 1 or not a whole number is 422.`,
    }),
  ),
  cursor: Type.Optional(CursorParam),
  updated_since: Type.Optional(UpdatedSinceParam),
});
