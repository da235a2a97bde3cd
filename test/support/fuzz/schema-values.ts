import fc from 'fast-check';
import { hostileKey, hostileNumber, hostileString, hostileValue, Obj } from './values.js';

export type JsonSchema = Record<string, unknown>;

/**
 * Plausible strings of the fixture (its filespace, a library path, slugs, names, event words),
 * so generated requests also get past the first check and reach the deeper ones.
 */
export interface Plausible {
  strings: string[];
  ids: { min: number; max: number };
  /** Values that pass a field of this name (the fixture's filespace for `filespace`, …). */
  byName: Record<string, unknown[]>;
}

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value that fits the schema (bounds kept small, ids in the fixture's range). */
function fitting(schema: JsonSchema, p: Plausible, depth: number): fc.Arbitrary<unknown> {
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => valueFor(b, p, depth)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.format === 'date')
        return fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
      const min = Number(schema.minLength ?? 0);
      const max = Math.max(min, Math.min(Number(schema.maxLength ?? 30), 30));
      return fc.oneof(
        fc.string({ unit: 'grapheme', minLength: min, maxLength: max }),
        fc.constantFrom(...p.strings),
      );
    }
    case 'integer': {
      const min = Math.max(Number(schema.minimum ?? p.ids.min - 1), -5);
      const max = Math.min(Number(schema.maximum ?? p.ids.max), p.ids.max);
      return fc.integer({ min: Math.min(min, max), max });
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const items = isObject(schema.items) ? schema.items : {};
      return fc.array(valueFor(items, p, depth + 1), {
        maxLength: Math.min(Number(schema.maxItems ?? 4), 4),
      });
    }
    case 'object':
      return objectFor(schema, p, depth);
    default:
      return looseObject(p);
  }
}

/** The schema's fields, each sometimes hostile; required ones sometimes missing, extra ones sometimes added. */
function objectFor(schema: JsonSchema, p: Plausible, depth: number): fc.Arbitrary<Obj> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields = Object.entries(properties).map(([name, sub]) => {
    const hinted = p.byName[name];
    const generic = valueFor(isObject(sub) ? sub : {}, p, depth + 1);
    const value = hinted
      ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...hinted) }, { weight: 1, arbitrary: generic })
      : generic;
    const keep = required.has(name) ? fc.constantFrom(true, true, true, true, false) : fc.boolean();
    return fc.tuple(keep, value).map(([k, v]) => (k ? ([[name, v]] as Array<[string, unknown]>) : []));
  });
  const extra = fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 2 });
  return fc
    .tuple(
      fc.tuple(...fields),
      fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extra }),
    )
    .map(([kept, added]) => new Obj([...kept.flat(), ...added]));
}

/** Where a schema says nothing (a storage event): objects of plausible keys and values. */
function looseObject(p: Plausible): fc.Arbitrary<unknown> {
  const keys = ['event_type', 'path', 'to_path', 'source', 'dedupe_key', 'detected_at', 'size'];
  const valueOf = (key: string) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...(p.byName[key] ?? p.strings)) },
      { weight: 1, arbitrary: hostileValue },
    );
  const fields = keys.map((k) =>
    fc.tuple(fc.constantFrom(true, true, true, false), valueOf(k)).map(([keep, v]) => (keep ? [[k, v]] : [])),
  );
  const extra = fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 1 });
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.tuple(...fields), extra)
        .map(([kept, added]) => new Obj([...(kept.flat() as Array<[string, unknown]>), ...added])),
    },
    { weight: 1, arbitrary: hostileValue },
  );
}

/** Mostly a fitting value; now and then a hostile one of the same kind, or of any kind. */
export function valueFor(schema: JsonSchema, p: Plausible, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 6) return hostileValue;
  const type = schema.type;
  const sameKind =
    type === 'string'
      ? hostileString
      : type === 'integer' || type === 'number'
        ? hostileNumber
        : hostileValue;
  return fc.oneof(
    { weight: 6, arbitrary: fitting(schema, p, depth) },
    { weight: 1, arbitrary: sameKind },
    { weight: 1, arbitrary: hostileValue },
  );
}
