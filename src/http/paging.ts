import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Page } from '../domain/page.js';
import { etagOfBytes, ifNoneMatchHits } from './conditional.js';

/** Answers a page: the body stays the list's array; the next page is named in a Link header. */
export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, page: Page<T>): T[] {
  if (page.next !== null) {
    const url = new URL(request.url, 'http://prodgraph.invalid');
    url.searchParams.set('cursor', page.next);
    void reply.header('link', `<${url.pathname}${url.search}>; rel="next"`);
  }
  return page.items;
}

/**
 * Answers a page as sendPage does, with a strong ETag over its bytes and its Link header, and 304
 * with no body when If-None-Match already holds them: a poller re-reading a page (or a change
 * window) that has not moved is told so without the rows. The page is assembled either way
 * (pages and windows are not kept), so this saves the transfer, not the queries.
 */
export function sendConditionalPage<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  page: Page<T>,
): FastifyReply {
  sendPage(request, reply, page);
  const serialised = reply.serialize(page.items);
  const body = typeof serialised === 'string' ? serialised : String(serialised);
  const link = reply.getHeader('link');
  const etag = etagOfBytes(Buffer.from(`${link ?? ''}\n${body}`, 'utf8'));
  reply.header('etag', etag);
  if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(body);
}

/**
 * Whether a list request asks for a page or a change window. A plain list is the same bytes for
 * everyone with the same view at one revision, so only it is kept in the answer cache; a page
 * carries its Link header and a window depends on its instant.
 */
export const isPaged = (query: { limit?: unknown; cursor?: unknown; updated_since?: unknown }): boolean =>
  query.limit !== undefined || query.cursor !== undefined || query.updated_since !== undefined;
