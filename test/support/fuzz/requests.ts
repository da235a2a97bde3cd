import fc from 'fast-check';
import { valueFor, type JsonSchema, type Plausible } from './schema-values.js';
import { hostileString, hostileUrlText, percentText, Raw, toJson } from './values.js';

/** One operation of the OpenAPI document. */
export interface Operation {
  method: string;
  path: string;
  parameters: Array<{ in: string; name: string; schema?: JsonSchema }>;
  body: Record<string, JsonSchema>;
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: Buffer;
}

export interface Keys {
  /** Every scope but admin, production-wide. */
  wide: string;
  vendor: string;
  readOnly: string;
  /** The admin scope alone: the admin API (webhooks, keys, engagements, grants). */
  admin: string;
}

/**
 * Operations the admin key is sent to: the admin API, except where a success would take the
 * fuzz's own credentials away (revoking a key or a grant, archiving the vendor's engagement),
 * which would turn the rest of the run into 401s and 404s. Other keys still reach those.
 */
export const adminKeyFits = (op: Operation): boolean =>
  op.path.includes('/admin/') && !/\/(revoke|archive)$/.test(op.path);

/** Every operation of the document, parameters and request bodies resolved. */
export function operationsOf(doc: {
  paths: Record<string, Record<string, Record<string, unknown>>>;
}): Operation[] {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = ((op.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined)
        ?.content ?? {}) as Record<string, { schema?: JsonSchema }>;
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []) as Operation['parameters'],
        body: Object.fromEntries(Object.entries(content).map(([t, c]) => [t, c.schema ?? {}])),
      });
    }
  }
  return out;
}

/** A parameter as text: mostly one that fits its schema, sometimes anything a hostile client writes. */
function parameterText(schema: JsonSchema | undefined, p: Plausible): fc.Arbitrary<string> {
  const s = schema ?? {};
  const items = (s.type === 'array' ? s.items : s) as JsonSchema;
  const fitting =
    items.type === 'integer'
      ? fc.integer({ min: p.ids.min, max: p.ids.max }).map(String)
      : Array.isArray(items.enum)
        ? fc.constantFrom(...(items.enum as unknown[]).map(String))
        : items.type === 'boolean'
          ? fc.constantFrom('true', 'false')
          : fc.constantFrom(...p.strings).map(percentText);
  return fc.oneof({ weight: 4, arbitrary: fitting }, { weight: 2, arbitrary: hostileUrlText });
}

/** `present` in `present + absent` draws the value, otherwise undefined. */
const sometimes = <T>(arb: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: present, arbitrary: arb });

function urlFor(op: Operation, p: Plausible): fc.Arbitrary<string> {
  const inPath = op.parameters.filter((x) => x.in === 'path');
  const inQuery = op.parameters.filter((x) => x.in === 'query');
  const segments = fc.tuple(...inPath.map((x) => parameterText(x.schema, p)));
  const wildcard = fc.array(fc.oneof(fc.constantFrom('ab', 'cd', 'x.jpg', '..'), hostileUrlText), {
    minLength: 1,
    maxLength: 3,
  });
  // one value mostly, now and then the same parameter repeated
  const values = (name: string, schema: JsonSchema | undefined) =>
    fc
      .oneof(
        { weight: 5, arbitrary: parameterText(schema, p).map((v) => [v]) },
        { weight: 1, arbitrary: fc.array(parameterText(schema, p), { minLength: 2, maxLength: 3 }) },
      )
      .map((vs) => vs.map((v) => `${name}=${v}`));
  const declared = fc.tuple(...inQuery.map((x) => sometimes(values(x.name, x.schema), 1, 1)));
  const unknown = sometimes(
    fc.tuple(
      fc.oneof(fc.constantFrom('sort', 'q', 'page', 'debug', '__proto__'), hostileUrlText),
      hostileUrlText,
    ),
    1,
    6,
  );
  return fc.tuple(segments, wildcard, declared, unknown).map(([values, wild, query, extra]) => {
    let i = 0;
    const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      name === '*' ? wild.join('/') : values[i++]!,
    );
    const pairs = query.flatMap((q) => q ?? []);
    if (extra) pairs.push(`${extra[0]}=${extra[1]}`);
    return pairs.length > 0 ? `${path}?${pairs.join('&')}` : path;
  });
}

function authorization(keys: Keys, op: Operation): fc.Arbitrary<string | undefined> {
  const admin = adminKeyFits(op) ? [{ weight: 8, arbitrary: fc.constant(`Bearer ${keys.admin}`) }] : [];
  return fc.oneof(
    ...admin,
    { weight: 8, arbitrary: fc.constant(`Bearer ${keys.wide}`) },
    { weight: 2, arbitrary: fc.constant(`Bearer ${keys.vendor}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${keys.readOnly}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        hostileString.map((s) => `Bearer ${s}`),
        fc.constantFrom(
          'Basic dXNlcjpwdw==',
          'Bearer',
          'bearer  ',
          `Bearer ${keys.wide}x`,
          `Token ${keys.wide}`,
        ),
      ),
    },
  );
}

const JPEG_SOI = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);

/**
 * A multipart body: declared and unknown fields, files of any bytes (the fixture's images among
 * them) and name, or thousands of parts.
 */
function multipartBody(
  schema: JsonSchema,
  p: Plausible,
  images: Buffer[],
): fc.Arbitrary<{ body: Buffer; boundary: string }> {
  const names = Object.keys((schema.properties as JsonSchema | undefined) ?? {});
  const fieldName = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...names, 'file', 'files', 'filespace', 'path') },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length < 100 && !/["\r\n]/.test(s)) },
  );
  const content = fc.oneof(
    fc.constantFrom(...images),
    fc.constant(Buffer.alloc(0)),
    fc.constant(Buffer.from('just some text\n')),
    fc.constant(Buffer.concat([JPEG_SOI, Buffer.from('not really a jpeg')])),
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  );
  const filename = fc.oneof(
    fc.constantFrom(
      'still.jpg',
      '',
      '../../etc/passwd',
      'a\u0000.jpg',
      'C:\\x.jpg',
      'x'.repeat(300),
      'é.jpg',
    ),
    hostileString.filter((s) => s.length < 200 && !/["\r\n]/.test(s)),
  );
  const text = fc.oneof(
    fc.constantFrom(...p.strings),
    hostileString.filter((s) => s.length < 20_000),
  );
  const hinted = fc
    .constantFrom(...Object.entries(p.byName).filter(([, v]) => typeof v[0] === 'string'))
    .chain(([name, v]) => fc.constantFrom(...(v as string[])).map((value) => [name, value] as const));
  const part = fc.oneof(
    hinted.map(([name, value]) => ({ name, value: Buffer.from(value), filename: undefined })),
    fc
      .tuple(fieldName, text)
      .map(([name, value]) => ({ name, value: Buffer.from(value), filename: undefined })),
    fc.tuple(fieldName, filename, content).map(([name, fname, value]) => ({ name, value, filename: fname })),
  );
  const boundary = 'fuzzBoundary7MA4YWxkTrZu0gW';
  const render = (parts: Array<{ name: string; value: Buffer; filename?: string }>, close: boolean) =>
    Buffer.concat([
      ...parts.flatMap((x) => [
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${x.name}"` +
            (x.filename !== undefined
              ? `; filename="${x.filename}"\r\nContent-Type: application/octet-stream`
              : '') +
            '\r\n\r\n',
        ),
        x.value,
        Buffer.from('\r\n'),
      ]),
      Buffer.from(close ? `--${boundary}--\r\n` : ''),
    ]);
  return fc
    .oneof(
      { weight: 6, arbitrary: fc.tuple(fc.array(part, { maxLength: 5 }), fc.boolean()) },
      // thousands of parts
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: 1_000, max: 3_000 })
          .map(
            (n) =>
              [
                Array.from({ length: n }, (_, i) => ({ name: `f${i}`, value: Buffer.from('x') })),
                true,
              ] as const,
          ),
      },
    )
    .map(([parts, close]) => ({ body: render([...parts], close), boundary }));
}

/** A body as raw bytes: empty, truncated, BOM-led, with trailing garbage, or anything. */
function rawBody(json: string): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.constant(Buffer.alloc(0)),
    fc.integer({ min: 0, max: Math.max(0, json.length - 1) }).map((n) => Buffer.from(json.slice(0, n))),
    fc.constant(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)])),
    fc.constantFrom('}', ' garbage', '\u0000', ',{}').map((tail) => Buffer.from(json + tail)),
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    // nested past the depth every JSON body is scanned for before it is parsed
    fc.integer({ min: 65, max: 5000 }).map((n) => Buffer.from('['.repeat(n) + json + ']'.repeat(n))),
    fc.constantFrom('[', '{"a":').map((open) => Buffer.from(open.repeat(200_000))),
  );
}

const OTHER_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'application/xml',
  'image/jpeg',
  'garbage',
  ';;;',
];

/** Requests for one operation: its URL, headers and, for a POST, every kind of body. */
export function requestsFor(
  op: Operation,
  keys: Keys,
  p: Plausible,
  images: Buffer[],
): fc.Arbitrary<FuzzRequest> {
  const jsonSchema = op.body['application/json'];
  const formSchema = op.body['multipart/form-data'];
  const json = valueFor(jsonSchema ?? { type: 'object' }, p).map(toJson);
  const body: fc.Arbitrary<{ payload?: Buffer; type?: string }> =
    op.method === 'GET'
      ? fc.constant({})
      : fc.oneof(
          {
            weight: jsonSchema ? 6 : 1,
            arbitrary: json.map((j) => ({ payload: Buffer.from(j), type: 'application/json' })),
          },
          {
            weight: formSchema ? 6 : 1,
            arbitrary: multipartBody(formSchema ?? {}, p, images).map(({ body: b, boundary }) => ({
              payload: b,
              type: `multipart/form-data; boundary=${boundary}`,
            })),
          },
          {
            weight: 2,
            arbitrary: fc
              .tuple(json, fc.constantFrom(...OTHER_TYPES, undefined))
              .chain(([j, type]) => rawBody(j).map((payload) => ({ payload, type }))),
          },
          { weight: 1, arbitrary: fc.constant({}) },
          {
            weight: 1,
            arbitrary: fc.constant({ payload: Buffer.from(new Raw('{}').text), type: undefined }),
          },
        );
  const extraHeaders = fc.record({
    'idempotency-key': sometimes(
      fc.oneof(
        fc.uuid(),
        hostileString.filter((s) => s.length < 400),
      ),
      1,
      4,
    ),
    'if-none-match': sometimes(
      fc.oneof(
        fc.constantFrom('*', '"abc"', 'W/"x"', ''),
        hostileString.filter((s) => s.length < 200),
      ),
      1,
      6,
    ),
    range: sometimes(
      fc.constantFrom(
        'bytes=0-0',
        'bytes=5-2',
        'bytes=-1',
        'bytes=0-',
        'bytes=99999999999999999999-',
        'pages=1',
      ),
      1,
      6,
    ),
  });
  return fc.tuple(urlFor(op, p), authorization(keys, op), body, extraHeaders).map(([url, auth, b, extra]) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(extra)) if (value !== undefined) headers[name] = value;
    if (auth !== undefined) headers.authorization = auth;
    if (b.type !== undefined) headers['content-type'] = b.type;
    return { method: op.method, url, headers, ...(b.payload !== undefined ? { payload: b.payload } : {}) };
  });
}
