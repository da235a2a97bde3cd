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
 */

import { REFUSALS } from './reference.js';

type Json = Record<string, unknown>;

const MARK = 'x-prodgraph-schema';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of a route's body or response schema, each named sub-schema marked with its `$id`. */
export function markNamedSchemas(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(markNamedSchemas);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'examples' ? v : markNamedSchemas(v);
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

/**
 * What any operation may answer, whatever it declares: 422 (every route refuses an unknown query
 * parameter, naming it) and 500 (an unexpected failure, with nothing more said).
 */
export function everyOperationRefuses(document: Json): void {
  for (const item of Object.values(isObject(document.paths) ? document.paths : {})) {
    for (const op of Object.values(isObject(item) ? item : {})) {
      if (!isObject(op) || !isObject(op.responses)) continue;
      op.responses['422'] ??= refusal(`${REFUSALS[422]} (here: an unknown query parameter)`);
      op.responses['500'] ??= refusal(REFUSALS[500]);
    }
  }
}
