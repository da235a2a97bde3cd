import type { ProdgraphClient } from './client.js';
import { ApiError } from './errors.js';
import type { GetInit, GetPath, LooseGet, OkBody } from './types.js';

/** A document kept with the ETag it came with. */
export interface Kept {
  etag: string;
  data: unknown;
}

/** Where conditionalGet keeps documents: any Map-like store (persist it to survive a restart). */
export type ConditionalCache = Pick<Map<string, Kept>, 'get' | 'set' | 'delete'>;

export interface Conditional<T> {
  data: T;
  /** 200: a new or changed document; 304: the kept one is current (nothing was sent again). */
  status: 200 | 304;
  etag: string | null;
  response: Response;
}

/** One cache per client unless the caller brings its own. */
const caches = new WeakMap<ProdgraphClient, ConditionalCache>();
const cacheOf = (client: ProdgraphClient): ConditionalCache => {
  let cache = caches.get(client);
  if (!cache) caches.set(client, (cache = new Map()));
  return cache;
};

const keyOf = (path: string, init: unknown): string =>
  `${path} ${JSON.stringify((init as { params?: unknown } | undefined)?.params ?? {})}`;

/**
 * A GET that keeps what it fetched: it sends the kept ETag in `If-None-Match`, and on 304 answers
 * the kept document without the server sending it again. Made for the bundles:
 *
 *   const { data, status } = await conditionalGet(client, '/api/v1/bundles/scene/{node_id}', {
 *     params: { path: { node_id: 12 } },
 *   });
 *
 * A refusal (a revoked grant answers 404) throws ApiError and forgets the kept document.
 */
export async function conditionalGet<P extends GetPath>(
  client: ProdgraphClient,
  path: P,
  init: GetInit<P>,
  cache: ConditionalCache = cacheOf(client),
): Promise<Conditional<OkBody<P>>> {
  const key = keyOf(path, init);
  const kept = cache.get(key);
  const base = init as { headers?: Record<string, string> };
  const headers = { ...base.headers, ...(kept ? { 'if-none-match': kept.etag } : {}) };
  const { data, error, response } = await (client.GET as unknown as LooseGet)(path, { ...base, headers });
  if (response.status === 304 && kept) {
    return { data: kept.data as OkBody<P>, status: 304, etag: kept.etag, response };
  }
  if (error !== undefined || !response.ok) {
    cache.delete(key);
    throw new ApiError(response, error);
  }
  const etag = response.headers.get('etag');
  if (etag) cache.set(key, { etag, data });
  else cache.delete(key);
  return { data: data as OkBody<P>, status: 200, etag, response };
}
