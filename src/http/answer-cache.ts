import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Principal } from '../auth/principal.js';

/**
 * Assembled answers, serialised once and kept until the production changes (bench/FINDINGS.md
 * §3-4). An answer is filed under the production's revision as read with the caller's key at
 * the start of the request (Principal.revision): every committed write, import, sync and
 * grant or engagement change bumps that revision in its own transaction, so an answer is never
 * served once anything it could depend on has changed, and several server processes on one
 * PostgreSQL database stay correct without telling each other anything (each reads the
 * revision per request). An answer read at revision R may hold data newer than R (a write can
 * commit while it is assembled); that is what a request running alongside the write could
 * have seen anyway, and a request that starts after the commit reads R+1 and misses.
 *
 * What is NOT in the cache: the door. Whether a key may see the object is judged on every
 * request before the cache is consulted (the key lookup; for an engagement, its live grants),
 * so a revoked key, a revoked or expired grant and an archived engagement are refused on the
 * very next request whatever the cache holds.
 *
 * Bounded by bytes (least recently used first out), so the cache cannot grow the process past
 * its memory budget; PRODGRAPH_ANSWER_CACHE_MB=0 turns it off.
 */

export interface CachedAnswer {
  /** The serialised JSON body, exactly the bytes a 200 sends. */
  body: Buffer;
  /** Strong entity tag of the body, for the routes that send one. */
  etag: string | null;
}

/** Whose answer it is: the whole production, or one engagement's slice of it. */
export const viewOf = (principal: Principal): string =>
  principal.engagementId === null ? 'production' : `engagement:${principal.engagementId}`;

export class AnswerCache {
  private readonly lru: LRUCache<string, CachedAnswer> | null;
  /** Running totals for the metrics: lookups answered from the cache, lookups not, answers pushed out for room. */
  readonly stats = { hits: 0, misses: 0, evictions: 0 };

  constructor(maxBytes: number) {
    this.lru =
      maxBytes > 0
        ? new LRUCache<string, CachedAnswer>({
            maxSize: maxBytes,
            // the body dominates; the key and the entry's bookkeeping are counted roughly
            sizeCalculation: (a, key) => a.body.length + key.length + 200,
            dispose: (_value, _key, reason) => {
              if (reason === 'evict') this.stats.evictions++;
            },
          })
        : null;
  }

  /** The cache key: route and object, the caller's view, and the revision read with the key. */
  static key(route: string, principal: Principal, subject: string | number = ''): string {
    return `${principal.productionId}:${principal.revision}:${viewOf(principal)}:${route}:${subject}`;
  }

  get(key: string): CachedAnswer | undefined {
    if (!this.lru) return undefined;
    const found = this.lru.get(key);
    if (found) this.stats.hits++;
    else this.stats.misses++;
    return found;
  }

  set(key: string, answer: CachedAnswer): void {
    // an answer larger than the whole budget is not cached (lru-cache would refuse it anyway)
    this.lru?.set(key, answer);
  }

  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }

  get entries(): number {
    return this.lru?.size ?? 0;
  }
}

/**
 * Sends the cached answer for `key`, assembling and caching it first on a miss. `build` runs
 * only on a miss, judges the caller's reach itself (as every service does) and answers the
 * payload (and its ETag, for the routes that send one); the payload is serialised through the
 * route's response schema exactly as `reply.send` would. On a hit, `door` judges the caller's
 * reach instead, before anything is sent. With an ETag, a matching If-None-Match is answered
 * 304 without assembling anything.
 */
export async function sendAnswer(
  cache: AnswerCache,
  request: FastifyRequest,
  reply: FastifyReply,
  key: string,
  build: () => Promise<{ payload: unknown; etag?: string }>,
  options: {
    /**
     * Judges the caller's reach on a hit (`build` judges a miss): throws a refusal, or answers
     * a payload to send instead of the kept answer (e.g. the empty answer of a lapsed grant).
     */
    door?: () => Promise<unknown>;
    /** Whether the request's conditional headers match the answer's ETag (then: 304). */
    matches?: (request: FastifyRequest, etag: string) => boolean;
    /** Headers every answer carries (200 and 304 alike; not an error). */
    headers?: Record<string, string>;
  } = {},
): Promise<FastifyReply> {
  let answer = cache.get(key);
  if (answer) {
    const instead = await options.door?.();
    if (instead !== undefined) return reply.send(instead);
  } else {
    const built = await build();
    const body = reply.serialize(built.payload);
    answer = {
      body: typeof body === 'string' ? Buffer.from(body) : Buffer.from(body as Buffer),
      etag: built.etag ?? null,
    };
    cache.set(key, answer);
  }
  reply.headers(options.headers ?? {});
  if (answer.etag !== null) {
    reply.header('etag', answer.etag);
    if (options.matches?.(request, answer.etag)) return reply.code(304).send();
  }
  return reply.type('application/json; charset=utf-8').send(answer.body);
}
