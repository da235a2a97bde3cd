/*
 * The response headers the reference documents, once each under components/headers, and the
 * rule that puts them on each response. Most follow from what the document already says of an
 * operation (it pages, it is counted, it takes an Idempotency-Key, the status, a JSON body its
 * route compresses); the rest a route declares itself (`config.responseHeaders`: its ETag, its
 * Location).
 */

import { compressible } from './compression.js';

type Json = Record<string, unknown>;

const text = (description: string, example?: string) => ({
  description,
  schema: { type: 'string', ...(example === undefined ? {} : { examples: [example] }) },
});
const count = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });

export const HEADERS = {
  ETag: text(
    'The strong entity tag of this answer (of a list: only of the whole list, asked for without `limit`). Send it back in `If-None-Match`: while it is unchanged the answer is 304 with no body.',
    '"Q2x9mX1cOeJ6m1r0bq8jv3cDqj0a2q2bkq9H1kq3vXo"',
  ),
  'Cache-Control': text(
    'How the answer may be kept: `private, no-cache` (keep it, revalidate with the ETag), `no-store` (it carries a token, ticket or key), or `private, max-age=0, must-revalidate` (media bytes)',
  ),
  Vary: text(
    '`Accept-Encoding` on every answer kept in memory (a list: the whole list, without `limit`) and on every compressed answer; `Authorization` where the answer depends on the key that asked',
  ),
  'Content-Encoding': text(
    '`br` or `gzip` when the client asked for it in `Accept-Encoding` and the JSON is 1 kB or more; absent otherwise',
  ),
  'Last-Modified': text('When the file was stored (HTTP date)'),
  'Accept-Ranges': text('`bytes`: a `Range` request answers 206'),
  'Content-Range': text('The bytes sent and the file size: `bytes 0-1023/48213` (416: `bytes */48213`)'),
  'Content-Disposition': text(
    '`inline` for raster images, video and PDF, `attachment` for anything else (HTML, XML, SVG, text: saved, never run), with the file name, sanitised',
  ),
  'Content-Security-Policy': text(
    "`default-src 'none'; sandbox` (a PDF: `default-src 'none'; style-src 'unsafe-inline'`, as browsers run no PDF viewer in a sandbox): nothing a stored file holds runs with the API's origin",
  ),
  Location: text('The URL of the record the write made or changed (the asset)', '/api/v1/assets/42'),
  Link: text(
    'Present only when more rows follow: `<URL of the next page>; rel="next"` (RFC 8288), the same filters plus an opaque `cursor`',
  ),
  'RateLimit-Limit': count("Requests this key may make in the current window (PRODGRAPH_RATE_LIMIT's count)"),
  'RateLimit-Remaining': count('Requests left in the current window'),
  'RateLimit-Reset': count('Seconds until the current window ends'),
  'Retry-After': count('Seconds to wait before asking again'),
  'Idempotent-Replayed': text(
    'Present (`true`) only when this repeats the answer to an earlier request with the same Idempotency-Key and body: nothing was written again',
    'true',
  ),
  'Referrer-Policy': text(
    '`no-referrer`: a page showing the file never hands its URL (a ticket may ride in it) to another site',
  ),
  'WWW-Authenticate': text('`Bearer realm="prodgraph"`: the key to send'),
  Allow: text('The methods this path takes', 'POST'),
  'Set-Cookie': text(
    'The console session cookie `prodgraph_session` (HttpOnly, SameSite=Strict, Secure when PRODGRAPH_PUBLIC_URL is https), or `prodgraph_sign_in` holding a sign-in in progress (SameSite=Lax, ten minutes), set or cleared',
  ),
} as const;

export type ResponseHeader = keyof typeof HEADERS;

/**
 * Headers a route answers of its own, by status (a route's `config.responseHeaders`); `all`:
 * on every status it documents, refusals included.
 */
export type RouteResponseHeaders = Partial<Record<number | 'all', readonly ResponseHeader[]>>;

/**
 * A bundle: its ETag, kept privately and revalidated, per key (its 200 is JSON: Vary and
 * Content-Encoding follow from that; its 304 varies as the 200 did).
 */
export const CONDITIONAL_ANSWER: RouteResponseHeaders = {
  200: ['ETag', 'Cache-Control'],
  304: ['ETag', 'Cache-Control', 'Vary'],
};

/** An answer cached in memory (AnswerCache): its ETag (and as CONDITIONAL_ANSWER). */
export const CACHED_ANSWER: RouteResponseHeaders = {
  200: ['ETag'],
  304: ['ETag', 'Vary'],
};

/**
 * A media file's bytes: conditional and ranged; under a content security policy whatever the
 * answer (the route's onSend hook, mediaAnswerHeaders), the file's own headers once it is found.
 */
export const MEDIA_BYTES: RouteResponseHeaders = {
  all: ['Content-Security-Policy'],
  200: ['ETag', 'Last-Modified', 'Accept-Ranges', 'Cache-Control', 'Content-Disposition', 'Referrer-Policy'],
  206: [
    'ETag',
    'Last-Modified',
    'Accept-Ranges',
    'Cache-Control',
    'Content-Disposition',
    'Referrer-Policy',
    'Content-Range',
  ],
  304: ['ETag', 'Last-Modified', 'Accept-Ranges', 'Cache-Control', 'Content-Disposition', 'Referrer-Policy'],
  // a refusal, not the file: it names no file (no Content-Disposition)
  416: ['ETag', 'Last-Modified', 'Accept-Ranges', 'Cache-Control', 'Referrer-Policy', 'Content-Range'],
};

/** An answer that carries a token, a ticket or a key: never kept. */
export const NOT_CACHED = (status: number): RouteResponseHeaders => ({ [status]: ['Cache-Control'] });

const RATE = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the reference needs to know of an operation's route (routeTable). */
export interface DocumentedRoute {
  responseHeaders?: RouteResponseHeaders | undefined;
  /** Its JSON answers are compressed on request (false: media bytes, refusals included). */
  compresses: boolean;
}

/** What the document already says of an operation that decides its headers. */
function factsOf(op: Json, route: DocumentedRoute | undefined) {
  const params = (Array.isArray(op.parameters) ? op.parameters : []) as Json[];
  const has = (where: string, name: string) => params.some((p) => p.in === where && p.name === name);
  const responses = isObject(op.responses) ? op.responses : {};
  return {
    pages: has('query', 'cursor'),
    replays: has('header', 'idempotency-key'),
    counted: '429' in responses,
    // @fastify/compress is global: a route compresses unless it turns it off
    compresses: route?.compresses ?? true,
  };
}

/**
 * Whether a response may go out compressed: it has a JSON body (success or refusal alike: a
 * 422 naming a long parameter passes 1 kB too) and its route compresses.
 */
const compressed = (response: Json, facts: ReturnType<typeof factsOf>) =>
  facts.compresses && isObject(response.content) && Object.keys(response.content).some(compressible);

/** The headers one response carries: by the rules, then as its route declares. */
function headersOf(
  status: string,
  response: Json,
  facts: ReturnType<typeof factsOf>,
  declared: readonly string[] = [],
) {
  const code = Number(status);
  const ok = code >= 200 && code < 300;
  const names: string[] = [];
  // counted once the key is known: every answer but the refusals that come before (401, 403)
  if (facts.counted && code !== 401 && code !== 403) names.push(...RATE);
  if (code === 429 || code === 503) names.push('Retry-After');
  if (code === 401) names.push('WWW-Authenticate');
  if (code === 405) names.push('Allow');
  if (facts.pages && code === 200) names.push('Link');
  if (facts.replays && ok) names.push('Idempotent-Replayed');
  if (compressed(response, facts)) names.push('Content-Encoding', 'Vary');
  names.push(...declared);
  return [...new Set(names)];
}

/**
 * Puts every header on the responses that carry it (as a `$ref` to components/headers), in
 * place of the inline `link` the per-route pass wrote. `routeOf` answers an operation's route
 * by operationId.
 */
export function documentHeaders(
  doc: Json,
  routeOf: (operationId: string) => DocumentedRoute | undefined,
): void {
  const components = doc.components as Json;
  components.headers = { ...(isObject(components.headers) ? components.headers : {}), ...HEADERS };
  for (const item of Object.values(isObject(doc.paths) ? doc.paths : {})) {
    for (const op of Object.values(isObject(item) ? item : {})) {
      if (!isObject(op) || !isObject(op.responses)) continue;
      const route = typeof op.operationId === 'string' ? routeOf(op.operationId) : undefined;
      const facts = factsOf(op, route);
      for (const [status, response] of Object.entries(op.responses)) {
        if (!isObject(response)) continue;
        const own = route?.responseHeaders;
        const names = headersOf(status, response, facts, [
          ...(own?.[Number(status)] ?? []),
          ...(own?.all ?? []),
        ]);
        const rest = isObject(response.headers) ? response.headers : {};
        delete rest.link;
        const headers = {
          ...rest,
          ...Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }])),
        };
        if (Object.keys(headers).length) response.headers = headers;
        else delete response.headers;
      }
    }
  }
}
