import fc from 'fast-check';

/** JSON text spliced into a body as is: numbers JSON.stringify cannot write, deep nesting. */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object as entries, so a body can carry `__proto__` as a plain key, or one key twice. */
export class Obj {
  constructor(readonly entries: Array<[string, unknown]>) {}
}

export function toJson(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Obj)
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') return toJson(new Obj(Object.entries(value)));
  return JSON.stringify(value) ?? 'null';
}

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const control = fc
  .integer({ min: 0, max: 0x9f })
  .filter((c) => c < 0x20 || c >= 0x7f)
  .map((c) => String.fromCharCode(c));
const anyUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: loneSurrogate },
  { weight: 1, arbitrary: control },
);

/** Text a hostile client sends: controls, lone surrogates, injection, odd Unicode, 100 kB. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\t',
    'a\u0000b',
    '\u0000',
    'x\u0007y',
    '\u001b[31mred',
    'del\u007f',
    'nel\u0085',
    '\ud800',
    'a\udc00b',
    '\ufeffbom',
    '\u202eevil',
    'e\u0301',
    '🎬',
    'null',
    'undefined',
    'true',
    '../../etc/passwd',
    '/abs/path',
    'C:\\x',
    '%00',
    '%ZZ',
    '0x1A',
    '1e3',
    '-1',
    '+1',
    '01',
    '1.5',
    'NaN',
    'Infinity',
    '2147483648',
    '9223372036854775808',
    '99999999999999999999',
    "'; drop table nodes; --",
    '<script>alert(1)</script>',
    'line\r\nbreak',
    '__proto__',
    'constructor',
  ),
  fc.string({ unit: anyUnit, maxLength: 40 }),
  fc.constant('x'.repeat(100_000)),
  fc.constant('€'.repeat(40_000)),
);

export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    new Raw('1e400'),
    new Raw('-1e400'),
    new Raw('99999999999999999999'),
    new Raw('9223372036854775808'),
    new Raw('-0'),
    new Raw('1.0'),
    new Raw('1E2'),
    2147483647,
    2147483648,
    -2147483649,
    Number.MAX_SAFE_INTEGER,
    -1,
    0,
    0.5,
    1.5,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

export const deepNesting: fc.Arbitrary<Raw> = fc
  .integer({ min: 50, max: 5000 })
  .chain((n) =>
    fc.constantFrom(
      new Raw(`${'['.repeat(n)}${']'.repeat(n)}`),
      new Raw(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
    ),
  );

/** Anything at all where a value should be: wrong types, nulls, hostile text and numbers, nesting. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  hostileNumber,
  hostileString,
  fc.constant([]),
  fc.constant(new Obj([])),
  fc.constant(new Obj([['__proto__', new Obj([['admin', true]])]])),
  deepNesting,
  fc.jsonValue({ maxDepth: 3 }),
);

/** Keys an extra field may have: unknown names, prototype keys, hostile text. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'production_id', 'extra', ''),
  fc.string({ unit: anyUnit, maxLength: 12 }),
);

/** Bytes as percent-escapes: any byte sequence, UTF-8 or not. */
export const percentBytes = (bytes: Uint8Array): string =>
  [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** A string in a URL: UTF-8 percent-escaped, lone surrogates (which UTF-8 cannot hold) as CESU bytes. */
export function percentText(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) {
      out += percentBytes(Uint8Array.of(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)));
    } else if (/[A-Za-z0-9._~-]/.test(ch)) {
      out += ch;
    } else {
      out += percentBytes(new TextEncoder().encode(ch));
    }
  }
  return out;
}

/** A path segment or query value a hostile client writes. */
export const hostileUrlText: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((s) => s.length < 2000).map(percentText),
  fc.uint8Array({ maxLength: 12 }).map(percentBytes),
  fc.constantFrom('%ZZ', '%E2%82', '%C0%AF', '%ED%A0%80', '%', '%%', '%2', '..', '.', '%2e%2e', '%2F', '%5C'),
);
