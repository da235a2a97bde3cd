/*
 * The reference (/docs, /api/v1/openapi.json) is written from the route schemas. Routes declare
 * what they answer; this fills in what every route would otherwise repeat: a description for
 * each status (the success one from the body's schema, refusals from one table) and the example
 * each body schema carries (headers: documentHeaders). Applied as the
 * OpenAPI generator reads each route; the route's own schema is never changed.
 */

import { markNamedSchemas, REFUSALS } from './reference-document.js';

type Schema = Record<string, unknown>;

const SUCCESS: Record<string, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No content',
  206: 'Partial content',
  304: 'Not modified: the copy you hold (If-None-Match) is current; no body',
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

/** The file route's wildcard, as the document names it (Fastify calls it `*`). */
const WILDCARD_NAME = 'path';

const WILDCARD_DESCRIPTION =
  ' It may hold `/`: send it as returned, unencoded (a client that encodes it as `%2F` is served the same file).';

/**
 * A wildcard route (`/media/*`) as a real, named path parameter (`/media/{path}`): generators
 * and linters need the parameter's name to appear in the path. The route itself is unchanged.
 */
function namedWildcard(schema: Schema, url: string): { schema: Schema; url: string } {
  if (!url.endsWith('/*')) return { schema, url };
  const params = isObject(schema.params) ? schema.params : {};
  const properties = isObject(params.properties) ? params.properties : {};
  const star = isObject(properties['*']) ? properties['*'] : {};
  const description = `${typeof star.description === 'string' ? star.description : 'The rest of the path'}.${WILDCARD_DESCRIPTION}`;
  return {
    url: `${url.slice(0, -1)}:${WILDCARD_NAME}`,
    schema: {
      ...schema,
      params: {
        type: 'object',
        properties: { [WILDCARD_NAME]: { type: 'string', minLength: 1, description } },
        required: [WILDCARD_NAME],
      },
    },
  };
}

/** What makes a schema say what its value is; a schema with none of them takes anything. */
const TYPING = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum', 'const'];

/**
 * A query parameter the route leaves unchecked on purpose (an empty schema: whatever it holds
 * is judged by the handler, never refused as a 422 about its shape, as the file route's ticket
 * `t`) as what a client sends: one string. Generators and readers need a type; the route's own
 * validation is unchanged.
 */
function typedQuery(schema: Schema): Schema {
  const query = isObject(schema.querystring) ? schema.querystring : undefined;
  if (!query || !isObject(query.properties)) return schema;
  const properties = Object.fromEntries(
    Object.entries(query.properties).map(([name, p]) =>
      isObject(p) && !TYPING.some((k) => k in p) ? [name, { type: 'string', ...p }] : [name, p],
    ),
  );
  return { ...schema, querystring: { ...query, properties } };
}

/**
 * One route as the reference shows it: its responses described (referenceSchema), a wildcard
 * named, an unchecked query parameter typed, and a route that takes no key saying so (`security: []`) rather than leaving readers
 * and linters to guess.
 */
export function referenceRoute(
  schema: Schema | undefined,
  url: string,
  isPublic: boolean,
): { schema: Schema | undefined; url: string } {
  if (!schema) return { schema, url };
  const described = referenceSchema(schema) ?? schema;
  const marked = {
    ...described,
    ...(described.body ? { body: markNamedSchemas(described.body) } : {}),
    ...(described.response ? { response: markNamedSchemas(described.response) } : {}),
  };
  const named = namedWildcard(typedQuery(marked), url);
  return { url: named.url, schema: isPublic ? { ...named.schema, security: [] } : named.schema };
}
