import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TProperties, TSchema } from 'typebox';
import type { RestTwin } from './twins.js';

/** One validator instance for everything MCP checks: no coercion, JSON arguments are typed. */
export const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
// ajv-formats is CommonJS: its default export arrives wrapped under ESM
const formats = ((addFormats as unknown as { default?: typeof addFormats }).default ??
  addFormats) as unknown as (a: Ajv) => void;
formats(ajv);

export type JsonSchema = { type: 'object'; [key: string]: unknown };

/**
 * A REST schema as a self-contained JSON Schema document. The `$id`s that name components in
 * the OpenAPI document are dropped: one document may not hold one `$id` twice, and a client
 * compiling several tools' schemas into one validator would see them collide.
 */
export function plainSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value)));
}

const propertiesOf = (schema: TSchema | undefined) =>
  (schema as { properties?: TProperties } | undefined)?.properties ?? {};
const requiredOf = (schema: TSchema | undefined) =>
  (schema as { required?: string[] } | undefined)?.required ?? [];

/**
 * A tool's arguments: the twin's path parameters and query string merged into one object,
 * each property the REST route's own schema. Closed, unlike a query string: an agent that
 * misspells a filter is told so instead of silently getting everything.
 */
export function inputSchemaOf(twin: RestTwin, extra: TSchema | undefined): JsonSchema {
  const parts = [twin.params, twin.querystring, extra];
  const required = parts.flatMap(requiredOf);
  return plainSchema({
    type: 'object',
    properties: Object.assign({}, ...parts.map(propertiesOf)),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  } as unknown as TSchema) as JsonSchema;
}

/**
 * A tool's structured output: the twin's 200 schema. MCP carries structured content as an
 * object, so an array answer travels under one named key (`{"scenes": [...]}`).
 */
export function outputSchemaOf(twin: RestTwin, listKey: string | undefined): JsonSchema {
  const body = plainSchema(twin.response);
  if (!listKey) {
    if (body.type !== 'object')
      throw new Error(`MCP: ${twin.key} answers ${String(body.type)}; name a listKey`);
    return body as JsonSchema;
  }
  const pages = Object.hasOwn(propertiesOf(twin.querystring), 'cursor');
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
