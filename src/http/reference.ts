/*
 * The reference (/docs, /api/v1/openapi.json) is written from the route schemas. Routes declare
 * what they answer; this fills in what every route would otherwise repeat: a description for
 * each status (the success one from the body's schema, refusals from one table), the Link
 * header of the lists that page, and the example each body schema carries. Applied as the
 * OpenAPI generator reads each route; the route's own schema is never changed.
 */

type Schema = Record<string, unknown>;

/** What each refusal means, whatever the route (the detail says which case it is). */
const REFUSALS: Record<string, string> = {
  400: 'Malformed request: invalid JSON, a malformed multipart body or URL',
  401: 'No key, or a malformed, unknown or revoked key (`WWW-Authenticate: Bearer`)',
  403: 'Refused: an engagement-bound key off its surface (`engagement_door`), a missing scope (`scope_missing`), or a rule of this endpoint (`forbidden`)',
  404: "No such object, or one out of this key's reach: the two are indistinguishable",
  409: 'Conflict: already settled, a stale step, a duplicate',
  413: 'Too large: a body, file, batch or part count over its limit',
  415: 'Unsupported media type: a Content-Type or file type this endpoint does not take',
  416: 'Range not satisfiable: the Range lies outside the file',
  422: 'Validation failed: the detail starts with the field, parameter or header it names; nothing was written',
  405: 'Method not allowed: `Allow` names the methods this path takes',
  429: 'Too many requests: wait `Retry-After` seconds',
  500: 'Unexpected failure; nothing more is said',
  502: 'A provider this endpoint depends on failed',
  503: 'Not available (the database, or a provider that is not configured)',
};

const SUCCESS: Record<string, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No content',
  206: 'Partial content',
  304: 'Not modified: the copy you hold (If-None-Match) is current; no body',
};

const LINK = {
  link: {
    type: 'string',
    description:
      'Present when more rows follow: `</api/v1/…?…&cursor=…>; rel="next"` (RFC 8288), the URL of the next page with the same filters',
  },
};

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a body is, in a few words, from its schema's own title or description. */
function bodyDescription(schema: Schema): string | undefined {
  if (typeof schema.description === 'string') return schema.description;
  if (schema.type === 'array' && isObject(schema.items) && typeof schema.items.title === 'string') {
    return `Array of ${schema.items.title}`;
  }
  return typeof schema.title === 'string' ? schema.title : undefined;
}

/** The schema's own example, or (for an array) an array of its items' example. */
function exampleOf(schema: Schema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.type === 'array' && isObject(schema.items) && Array.isArray(schema.items.examples)) {
    return schema.items.examples.length > 0 ? [schema.items.examples[0]] : undefined;
  }
  return undefined;
}

function describeResponse(status: string, entry: unknown, produces: string[], pages: boolean): unknown {
  if (!isObject(entry)) return entry;
  if (isObject(entry.content)) {
    // already in response form (the shared error response): say what this status means
    const refusal = REFUSALS[status];
    return refusal && entry.description === 'Refused' ? { ...entry, description: refusal } : entry;
  }
  const ok = SUCCESS[status] ?? 'Answer';
  const what = bodyDescription(entry);
  const paged = pages && status === '200';
  const description = [
    what ? `${ok}: ${what}` : ok,
    paged ? 'Paged (see `limit`): when more rows follow, the `Link` header names the next page.' : '',
  ]
    .filter(Boolean)
    .join('. ');
  if (entry.type === 'null') return { ...entry, description };
  const example = exampleOf(entry);
  const media = { schema: entry, ...(example === undefined ? {} : { example }) };
  return {
    description,
    ...(paged ? { headers: LINK } : {}),
    content: Object.fromEntries((produces.length ? produces : ['application/json']).map((t) => [t, media])),
  };
}

/** The route schema as the reference shows it. */
export function referenceSchema(schema: Schema | undefined): Schema | undefined {
  if (!schema || !isObject(schema.response)) return schema;
  const produces = Array.isArray(schema.produces) ? (schema.produces as string[]) : [];
  const query = isObject(schema.querystring) ? schema.querystring : {};
  const pages = isObject(query.properties) && 'cursor' in query.properties;
  const response = Object.fromEntries(
    Object.entries(schema.response).map(([status, entry]) => [
      status,
      describeResponse(status, entry, produces, pages),
    ]),
  );
  return { ...schema, response };
}
