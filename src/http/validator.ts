import AjvCompiler from '@fastify/ajv-compiler';
import type { Ajv, ErrorObject } from 'ajv';
import { textProblem, type TextKind } from '../domain/text.js';
import type { ValidationItem } from '../validation.js';
import { CHECKED_WHERE_READ } from '../domain/schema-kit.js';
import { compiledWhen, type CompileSchemas } from './compile-schemas.js';

/*
 * How every request part is validated: as sent, never coerced, never silently trimmed.
 *
 * - JSON bodies: Ajv without type coercion and without removal of unknown fields, so
 *   `{"label": 42}` is 422 naming `label`, never an asset labelled "42".
 * - Path and query parameters arrive as strings; they are converted here, strictly, before Ajv
 *   sees them: a whole number is plain decimal digits (`1.5`, `1e3`, `0x1A`, `+1`, `01`,
 *   `Infinity`, `NaN` are not), a boolean is `true` or `false`. Bounds are then Ajv's, so an
 *   id beyond its column is refused before any query. An unknown query parameter is refused,
 *   naming it, as an unknown body field is; a single-valued one given twice is refused too.
 * - Every string a schema declares obeys the text rule of `textProblem`.
 */

const TEXT_KEYWORD = 'x-prodgraph-text';

const AJV_OPTIONS = { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false };

type Schema = Record<string, unknown>;
type HttpPart = 'body' | 'querystring' | 'params' | 'headers';
type Result = true | { value: unknown } | { error: ValidationItem[] };
type Validator = (data: unknown) => Result;
type CompileInput = { schema: Schema; method: string; url: string; httpPart?: HttpPart };
type Compile = (input: CompileInput) => ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
type ValidatorBuilder = (
  externalSchemas: unknown,
  options: { customOptions?: Record<string, unknown>; onCreate?: (ajv: Ajv) => void },
) => (input: CompileInput) => Validator;

type KeywordCheck = ((kind: TextKind, data: string) => boolean) & { errors?: Partial<ErrorObject>[] };

function addTextKeyword(ajv: Ajv): void {
  const check: KeywordCheck = (kind, data) => {
    const problem = textProblem(data, kind);
    check.errors = problem === null ? [] : [{ keyword: TEXT_KEYWORD, message: problem, params: {} }];
    return problem === null;
  };
  ajv.addKeyword({
    keyword: TEXT_KEYWORD,
    type: 'string',
    schemaType: 'string',
    errors: true,
    validate: check,
  });
}

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const SUBSCHEMA = ['additionalProperties', 'items', 'not', 'if', 'then', 'else', 'contains'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const mapValues = (o: Schema, f: (v: unknown) => unknown): Schema =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** A copy of the schema whose every string carries the text rule (the route's schema is left as is). */
function withTextRule(schema: unknown, kind: TextKind): unknown {
  if (!isObject(schema)) return schema;
  const out: Schema = { ...schema };
  for (const k of SUBSCHEMA) if (k in out) out[k] = withTextRule(out[k], kind);
  for (const k of SUBSCHEMA_LISTS)
    if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map((s) => withTextRule(s, kind));
  for (const k of SUBSCHEMA_MAPS)
    if (isObject(out[k])) out[k] = mapValues(out[k], (s) => withTextRule(s, kind));
  const type = out.type;
  if (type === 'string' || (Array.isArray(type) && type.includes('string'))) out[TEXT_KEYWORD] = kind;
  return out;
}

/** A copy of the schema with every part checked where it is read (CHECKED_WHERE_READ) taking anything. */
function enforced(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  if (schema[CHECKED_WHERE_READ] === true) return {};
  const out: Schema = { ...schema };
  for (const k of SUBSCHEMA) if (k in out) out[k] = enforced(out[k]);
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map(enforced);
  for (const k of SUBSCHEMA_MAPS) if (isObject(out[k])) out[k] = mapValues(out[k], enforced);
  return out;
}

/** Header names are case-insensitive and arrive lower-cased. */
function lowerCaseHeaders(schema: Schema): Schema {
  if (!isObject(schema.properties)) return schema;
  return {
    ...schema,
    properties: Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k.toLowerCase(), v])),
    ...(Array.isArray(schema.required)
      ? { required: (schema.required as string[]).map((k) => k.toLowerCase()) }
      : {}),
  };
}

const WHOLE = /^-?(0|[1-9][0-9]*)$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

const typeOf = (schema: unknown): unknown => (isObject(schema) ? schema.type : undefined);

/** An Ajv-shaped complaint about one parameter (its name escaped as a JSON pointer, as Ajv does). */
const problem = (name: string, message: string): ValidationItem => ({
  instancePath: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
  keyword: 'x-prodgraph-param',
  message,
  params: {},
});

/** One parameter value as its schema types it; strings that are not strictly that type stay strings. */
function convert(raw: string, schema: unknown): unknown {
  switch (typeOf(schema)) {
    case 'integer':
      return WHOLE.test(raw) ? Number(raw) : raw;
    case 'number':
      return NUMBER.test(raw) ? Number(raw) : raw;
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    default:
      return raw;
  }
}

/** Path or query parameters (strings, or arrays of strings for a repeated query key) to typed values. */
function convertParameters(
  data: unknown,
  schema: Schema,
  part: 'querystring' | 'params',
): { value: Schema } | { error: ValidationItem[] } {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const out: Schema = {};
  for (const [name, raw] of Object.entries(isObject(data) ? data : {})) {
    // own properties only: `?__proto__=x` or `?constructor=x` is an unknown parameter like any other
    const prop = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (prop === undefined) {
      const known = Object.keys(properties);
      const takes = known.length > 0 ? `this endpoint takes ${known.join(', ')}` : 'this endpoint takes none';
      const what = part === 'querystring' ? 'query parameter' : 'path parameter';
      return { error: [problem(name, `unknown ${what} (${takes})`)] };
    }
    const repeatable = typeOf(prop) === 'array';
    if (Array.isArray(raw) && !repeatable) {
      return { error: [problem(name, 'given more than once; this parameter takes one value')] };
    }
    const values = Array.isArray(raw) ? raw : [raw];
    if (repeatable) {
      const items = isObject(prop) ? prop.items : undefined;
      out[name] = (values as unknown[]).map((v) => (typeof v === 'string' ? convert(v, items) : v));
    } else {
      out[name] = typeof raw === 'string' ? convert(raw, prop) : raw;
    }
  }
  return { value: out };
}

/** A body schema that names no required field accepts an absent body. */
const bodyOptional = (schema: Schema): boolean =>
  !(Array.isArray(schema.required) && schema.required.length > 0);

/**
 * The validator builder for `schemaController.compilersFactory.buildValidator`: Fastify's own
 * Ajv compiler (schemas by `$id`, formats), with the options and conversions above; each route
 * part's validator compiled when `when` says.
 */
export function strictValidatorBuilder(when: CompileSchemas): AjvCompiler.ValidatorFactory {
  // library boundary: @fastify/ajv-compiler types compile as (schema); at run time it takes the route input
  const pool = AjvCompiler() as unknown as (externalSchemas: unknown, options: unknown) => Compile;
  return ((externalSchemas, options) => {
    const compile = pool(externalSchemas, {
      ...options,
      customOptions: { ...options.customOptions, ...AJV_OPTIONS },
      onCreate: (ajv: Ajv) => {
        addTextKeyword(ajv);
        options.onCreate?.(ajv);
      },
    });
    return ({ schema: stated, method, url, httpPart }) => {
      const part = httpPart ?? 'body';
      const schema = enforced(stated) as Schema;
      const shaped = part === 'headers' ? lowerCaseHeaders(schema) : schema;
      const validator = compiledWhen(when, () =>
        compile({
          schema: withTextRule(shaped, part === 'body' ? 'free' : 'line') as Schema,
          method,
          url,
          httpPart: part,
        }),
      );
      const run = (data: unknown): Result => {
        const validate = validator();
        return validate(data) ? true : { error: (validate.errors ?? []) as ValidationItem[] };
      };

      if (part === 'querystring' || part === 'params') {
        return (data) => {
          const converted = convertParameters(data, schema, part);
          if ('error' in converted) return converted;
          const result = run(converted.value);
          return result === true ? { value: converted.value } : result;
        };
      }
      if (part === 'body' && bodyOptional(schema)) {
        // Fastify hands an absent body over as null
        return (data) => (data === null ? true : run(data));
      }
      return run;
    };
    // library boundary: Fastify reads `{ value }`/`{ error }` results, which its ValidatorFactory type omits
  }) as ValidatorBuilder as unknown as AjvCompiler.ValidatorFactory;
}
