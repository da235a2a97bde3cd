import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TProperties, TSchema } from 'typebox';
import type { RestRoute } from './rest-routes.js';

/** One validator instance for everything MCP checks: no coercion, JSON arguments are typed. */
export const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
// ajv-formats is CommonJS: under ESM its default import is the module, the plugin is `.default`
addFormats.default(ajv);

export type JsonSchema = { type: 'object'; [key: string]: unknown };

/**
 * A REST schema as a self-contained JSON Schema document. The `$id`s that name components in
 * the OpenAPI document are dropped: one document may not hold one `$id` twice, and a client
 * compiling several tools' schemas into one validator would see them collide.
 */
export function plainSchema(schema: TSchema): Record<string, unknown> {
  const withoutIds = (key: string, value: unknown) => (key === '$id' ? undefined : value);
  return JSON.parse(JSON.stringify(schema, withoutIds)) as Record<string, unknown>;
}

// TSchema declares no members: an object schema is read through the shape it has
type ObjectSchema = { properties?: TProperties; required?: string[] };
const propertiesOf = (schema: ObjectSchema = {}) => schema.properties ?? {};
const requiredOf = (schema: ObjectSchema = {}) => schema.required ?? [];

/** A query flag REST spells as text (`1`/`true`/`0`/`false`): a tool takes a JSON boolean too. */
const FLAG_WORDS = ['0', '1', 'false', 'true'];
const isFlag = (p: Record<string, unknown>): boolean =>
  p.type === 'string' &&
  Array.isArray(p.enum) &&
  [...(p.enum as unknown[])].map(String).sort().join() === FLAG_WORDS.join();

/**
 * REST's words for the next page in a tool's: a tool result has no headers; the next page is
 * its `next_cursor`.
 */
export const toolWords = (text: string): string =>
  text
    .replace(
      /the `cursor` of the `Link: <…>; rel="next"` header of the previous page/g,
      'the `next_cursor` of the previous result',
    )
    .replace(/the next page named by the Link header/g, "the next page named by the result's `next_cursor`")
    .replace(/the Link header names the next/g, "the result's `next_cursor` names the next")
    .replace(/\bthe Link header\b/g, "the result's `next_cursor`");

/** A property of a tool's arguments: the REST schema, in JSON types and the tool's words. */
function toolProperty(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...schema };
  if (typeof out.description === 'string') out.description = toolWords(out.description);
  if (isFlag(schema)) {
    out.type = ['boolean', 'string'];
    out.enum = [true, false, ...(schema.enum as string[])];
  }
  return out;
}

/**
 * A tool's arguments: its REST route's path parameters and query string merged into one object,
 * each property the REST route's own schema, taken in JSON types (`released: true`,
 * `limit: 100`; the strings REST takes are accepted too). Closed, unlike a query string: an
 * agent that misspells a filter is told so instead of silently getting everything.
 */
export function inputSchemaOf(rest: RestRoute, extra: TSchema | undefined): JsonSchema {
  const parts = [rest.params, rest.querystring, extra];
  const required = parts.flatMap(requiredOf);
  const schema = plainSchema({
    type: 'object',
    properties: Object.fromEntries(parts.flatMap((p) => Object.entries(propertiesOf(p)))),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  }) as JsonSchema & { properties: Record<string, Record<string, unknown>> };
  for (const [name, p] of Object.entries(schema.properties)) schema.properties[name] = toolProperty(p);
  return schema;
}

/** The arguments a tool's REST route reads: a JSON boolean given for a text flag becomes its text. */
export function restArguments(schema: JsonSchema, args: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const out: Record<string, unknown> = { ...args };
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === 'boolean' && Array.isArray(properties[name]?.type)) out[name] = String(value);
  }
  return out;
}

/**
 * A tool's structured output: its REST route's 200 schema. MCP carries structured content as an
 * object, so an array answer travels under one named key (`{"scenes": [...]}`).
 */
export function outputSchemaOf(rest: RestRoute, listKey: string | undefined): JsonSchema {
  const body = plainSchema(rest.response);
  if (!listKey) {
    if (body.type !== 'object')
      throw new Error(`MCP: ${rest.key} answers ${String(body.type)}; name a listKey`);
    return body as JsonSchema;
  }
  const pages = Object.hasOwn(propertiesOf(rest.querystring), 'cursor');
  return {
    type: 'object',
    properties: {
      [listKey]: body,
      // REST names the next page in a Link header; a tool result has no headers
      ...(pages
        ? {
            next_cursor: {
              type: 'string',
              description: 'Present when more rows follow: pass it back as `cursor` with the same arguments',
            },
          }
        : {}),
    },
    required: [listKey],
  };
}

export const compile = (schema: JsonSchema): ValidateFunction => ajv.compile(schema);
