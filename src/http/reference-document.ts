/*
 * The last passes over the whole document, once every route is in it.
 *
 * Named schemas. Route schemas that carry an `$id` (TypeBox objects such as SceneBundle or
 * Change) are written inline by the OpenAPI generator, so every client generated from the
 * document would get anonymous, repeated types. Each is marked with its name as the route is
 * read (markNamedSchemas), and once the whole document is built, every marked copy becomes a
 * `$ref` to one entry under components/schemas (nameSchemas).
 *
 * Common refusals. What every route may answer whatever it declares (everyOperationRefuses).
 *
 * Request bodies. Whether each must be sent, by the rule the routes apply (bodiesAsRequired).
 */

import { bodyRequired } from './request-rules.js';
import { CHECKED_WHERE_READ } from '../domain/schema-kit.js';

type Json = Record<string, unknown>;

/** What each refusal means, whatever the route (the detail says which case it is); every route can answer 422 and 500, every route taking a body 400 and 415. */
export const REFUSALS: Record<string, string> & Record<400 | 415 | 422 | 500, string> = {
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
  503: 'Not available (the database, or a provider that is not configured); `Retry-After` says when to try again',
  507: 'The server has no room to store this write (its disk is full); nothing was written',
};

const MARK = 'x-prodgraph-schema';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of a route's body or response schema, each named sub-schema marked with its `$id`. */
export function markNamedSchemas(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(markNamedSchemas);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    // the validator's business only (strictValidatorBuilder): the document states the schema as it is
    if (k === CHECKED_WHERE_READ) continue;
    out[k] = k === 'examples' ? v : markNamedSchemas(v);
  }
  if (typeof schema.$id === 'string') out[MARK] = schema.$id;
  return out;
}

/** Replaces each marked schema (deepest first) by a `$ref`, keeping one copy per name. */
function hoist(node: unknown, named: Json): unknown {
  if (Array.isArray(node)) return node.map((n) => hoist(n, named));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) if (k !== MARK) out[k] = hoist(v, named);
  const name = node[MARK];
  if (typeof name !== 'string') return out;
  named[name] ??= out;
  return { $ref: `#/components/schemas/${name}` };
}

/** The last pass over the whole document: named schemas under components, referred to by name. */
export function nameSchemas<T>(document: T): T {
  const doc = document as Json;
  const components = isObject(doc.components) ? doc.components : (doc.components = {});
  const named = isObject(components.schemas) ? components.schemas : (components.schemas = {});
  doc.paths = hoist(doc.paths, named);
  components.schemas = Object.fromEntries(Object.entries(named).sort(([a], [b]) => a.localeCompare(b)));
  return document;
}

const refusal = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
});

const operationsOf = (document: Json): Json[] =>
  Object.values(isObject(document.paths) ? document.paths : {}).flatMap((item) =>
    Object.values(isObject(item) ? item : {}).filter(isObject),
  );

/**
 * What any operation may answer, whatever it declares: 422 (every route refuses an unknown query
 * parameter, naming it) and 500 (an unexpected failure, with nothing more said); and every
 * operation that takes a body, 415 (a Content-Type it does not take: the request rules refuse
 * it before reading) and 400 (bytes that are not the JSON or multipart framing they claim).
 */
export function everyOperationRefuses(document: Json): void {
  for (const op of operationsOf(document)) {
    if (!isObject(op.responses)) continue;
    op.responses['422'] ??= refusal(`${REFUSALS[422]} (here: an unknown query parameter)`);
    op.responses['500'] ??= refusal(REFUSALS[500]);
    if (!isObject(op.requestBody)) continue;
    op.responses['400'] ??= refusal(REFUSALS[400]);
    op.responses['415'] ??= refusal(REFUSALS[415]);
  }
}

/**
 * `requestBody.required` as the routes apply it (bodyRequired): the
 * generator marks every body required, though a body whose schema requires no field may be left
 * out (`POST /vision/session-token`). Run before the schemas are named, while they are inline.
 */
export function bodiesAsRequired(document: Json): void {
  for (const op of operationsOf(document)) {
    const body = op.requestBody;
    if (!isObject(body) || !isObject(body.content)) continue;
    const content = body.content;
    const schemas = Object.values(content).map((c) => (isObject(c) ? c.schema : undefined));
    body.required = bodyRequired(Object.keys(content), schemas);
  }
}
