import type { FetchOptions } from 'openapi-fetch';
import type { paths } from './openapi.js';

/** Paths that answer GET. */
export type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];

export type GetOperation<P extends GetPath> = paths[P] extends { get: infer O } ? O : never;

/** The JSON body of a GET's 200. */
export type OkBody<P extends GetPath> =
  GetOperation<P> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

/** What a GET takes besides its path: `params` (path, query, header) and fetch options. */
export type GetInit<P extends GetPath> = FetchOptions<GetOperation<P>>;

/** Lists that page: their query takes a `cursor` (named by the `Link` header of a page). */
export type PagedPath = {
  [P in GetPath]: GetOperation<P> extends { parameters: { query?: { cursor?: string } } }
    ? NonNullable<GetOperation<P>['parameters']['query']> extends { cursor?: string }
      ? P
      : never
    : never;
}[GetPath];

/** One row of a paged list. */
export type RowOf<P extends PagedPath> = OkBody<P> extends ReadonlyArray<infer R> ? R : never;

/** The shape every typed call answers, loosely: helpers look at it without the generics. */
export interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** A typed GET called with a path the caller chose (the helpers' one untyped seam). */
export type LooseGet = (path: string, init?: Record<string, unknown>) => Promise<Answer>;
