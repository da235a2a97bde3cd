/** Turning Ajv's complaints into one line that names the field, the same way everywhere. */

export interface ValidationItem {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/scenes/3/assets/1` → `scenes[3].assets[1]` */
export function pathOf(segments: Array<string | number>): string {
  let out = '';
  for (const p of segments) {
    const s = String(p);
    out += /^\d+$/.test(s) ? `[${s}]` : out === '' ? s : `.${s}`;
  }
  return out;
}

function fieldOf(item: ValidationItem, fallback: string): string {
  const parts = item.instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (item.keyword === 'required' && typeof item.params.missingProperty === 'string') {
    parts.push(item.params.missingProperty);
  }
  if (item.keyword === 'additionalProperties' && typeof item.params.additionalProperty === 'string') {
    parts.push(item.params.additionalProperty);
  }
  return pathOf(parts) || fallback;
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  string: 'a string',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function problemOf(item: ValidationItem, context: string): string {
  switch (item.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return context === 'querystring' ? 'unknown query parameter' : 'unknown field';
    case 'type': {
      const types = String(item.params.type ?? '').split(',');
      const words = types.map((t) => TYPE_WORDS[t] ?? t).join(' or ');
      // parameters arrive as text: say what text passes
      const written =
        context === 'querystring' || context === 'params' ? ' written in plain decimal digits' : '';
      return types.includes('integer') || types.includes('number')
        ? `must be ${words}${written}`
        : `must be ${words}`;
    }
    case 'enum':
      return `must be one of ${(item.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(item.params.allowedValue)}`;
    case 'format':
      return `must be a valid ${String(item.params.format)}`;
    case 'not':
      return 'is not allowed here';
    default:
      return item.message ?? 'is invalid';
  }
}

/** The field a validation failure names and the line that says what is wrong with it. */
export function validationFailure(
  items: readonly ValidationItem[],
  fallback: string,
): { field: string; detail: string } {
  // Union branches report noisily; the first concrete complaint is the useful one.
  const item = items.find((i) => i.keyword !== 'anyOf' && i.keyword !== 'oneOf') ?? items[0];
  if (!item) return { field: fallback, detail: `${fallback}: is invalid` };
  const field = fieldOf(item, fallback);
  return { field, detail: `${field}: ${problemOf(item, fallback)}` };
}

export const describeValidation = (items: readonly ValidationItem[], fallback: string): string =>
  validationFailure(items, fallback).detail;
