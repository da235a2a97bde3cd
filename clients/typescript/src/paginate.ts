import type { ProdgraphClient } from './client.js';
import { ApiError } from './errors.js';
import type { GetInit, LooseGet, PagedPath, RowOf } from './types.js';

/** The `cursor` of a `Link: <…>; rel="next"` header, or undefined on the last page. */
export function nextCursor(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(',')) {
    const m = /<([^>]*)>\s*;\s*rel="?next"?/i.exec(part);
    if (m) return new URL(m[1]!, 'http://prodgraph.invalid').searchParams.get('cursor') ?? undefined;
  }
  return undefined;
}

/**
 * Every page of a list, in order, following the `Link` header with the same filters. Each page
 * is its own request (retried on its own). Without `limit` in the query the server answers the
 * whole list as one page.
 */
export async function* pages<P extends PagedPath>(
  client: ProdgraphClient,
  path: P,
  init?: GetInit<P>,
): AsyncGenerator<RowOf<P>[], void, undefined> {
  const get = client.GET as unknown as LooseGet;
  const base = (init ?? {}) as { params?: { query?: Record<string, unknown> } };
  let cursor: string | undefined;
  do {
    const query = { ...base.params?.query, ...(cursor === undefined ? {} : { cursor }) };
    const { data, error, response } = await get(path, { ...base, params: { ...base.params, query } });
    if (error !== undefined || !response.ok) throw new ApiError(response, error);
    yield data as RowOf<P>[];
    cursor = nextCursor(response.headers.get('link'));
  } while (cursor !== undefined);
}

/**
 * Every row of a list, across all its pages:
 *
 *   for await (const asset of paginate(client, '/api/v1/assets', { params: { query: { limit: 200 } } })) …
 */
export async function* paginate<P extends PagedPath>(
  client: ProdgraphClient,
  path: P,
  init?: GetInit<P>,
): AsyncGenerator<RowOf<P>, void, undefined> {
  for await (const page of pages(client, path, init)) yield* page;
}
