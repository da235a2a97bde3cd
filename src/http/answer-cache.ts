import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Principal } from '../auth/principal.js';
import { chooseEncoding, COMPRESS_THRESHOLD, encode, ownUtf8, type Encoding } from './compression.js';
import { etagOfBytes, ifNoneMatchHits } from './conditional.js';

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
 * Kept as bytes: the JSON exactly as a 200 sends it, serialised once, plus its gzip and brotli
 * forms, each made once, on the first request that asks for it (encode). A hit sends
 * bytes; nothing is serialised or compressed again until the production changes.
 *
 * Bounded by bytes (least recently used first out), so the cache cannot grow the process past
 * its memory budget; PRODGRAPH_ANSWER_CACHE_MB=0 turns it off. What is counted is what is
 * held: every buffer is its own allocation (never a slice of a shared slab), and an entry's
 * size is its JSON, its encoded forms, its key and a fixed allowance for the bookkeeping.
 */

export interface CachedAnswer {
  /** The serialised JSON body, exactly the bytes an uncompressed 200 sends. */
  readonly body: Buffer;
  /** Strong entity tag: the route's own (a bundle's), or a hash of the body. */
  readonly etag: string;
  /** The body gzip- and brotli-encoded, once each was first asked for. */
  readonly encoded: Readonly<Partial<Record<Encoding, Buffer>>>;
}

/** Bytes an entry holds besides its buffers: the entry, its map slot, the buffers' headers. */
const ENTRY_OVERHEAD = 400;

const sizeOf = (a: CachedAnswer, key: string): number =>
  a.body.length +
  (a.encoded.gzip?.length ?? 0) +
  (a.encoded.br?.length ?? 0) +
  2 * key.length +
  ENTRY_OVERHEAD;

/** Whose answer it is: the whole production, or one engagement's slice of it. */
export const viewOf = (principal: Principal): string =>
  principal.engagementId === null ? 'production' : `engagement:${principal.engagementId}`;

/** A key's production and revision (the key's first two parts, see AnswerCache.key). */
function filedUnder(key: string): { production: string; revision: number } {
  const [production = '', revision = '0'] = key.split(':', 2);
  return { production, revision: Number(revision) };
}

export class AnswerCache {
  private readonly lru: LRUCache<string, CachedAnswer> | null;
  /**
   * Per production, the newest revision answers were filed under and their keys. An answer of
   * an older revision can never be asked for again (the revision only grows), so the moment a
   * newer one is filed, the older ones are dropped instead of waiting to be pushed out: a
   * production written to all day keeps only its current answers, not 64 MB of dead ones.
   */
  private readonly current = new Map<string, { revision: number; keys: Set<string> }>();
  /** Encodings under way, so concurrent requests for one answer compress it once. */
  private readonly encoding = new Map<string, Promise<Buffer>>();
  /**
   * Answers being assembled, so concurrent misses for one answer assemble it once: fifty
   * requests for a 30,000-row list that arrive before it is kept would otherwise each build
   * it (on PostgreSQL at the same time), holding fifty copies of its rows and JSON at once.
   */
  private readonly building = new Map<string, Promise<CachedAnswer>>();
  /** Running totals for the metrics: lookups answered from the cache, lookups not, answers pushed out for room. */
  readonly stats = { hits: 0, misses: 0, evictions: 0 };

  constructor(maxBytes: number) {
    this.lru =
      maxBytes > 0
        ? new LRUCache<string, CachedAnswer>({
            maxSize: maxBytes,
            sizeCalculation: sizeOf,
            dispose: (_value, key, reason) => {
              if (reason === 'evict') this.stats.evictions++;
              if (reason !== 'set') this.current.get(filedUnder(key).production)?.keys.delete(key);
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
    if (!this.lru) return;
    const { production, revision } = filedUnder(key);
    const now = this.current.get(production);
    // assembled at a revision already superseded: nobody will ask for it again
    if (now && revision < now.revision) return;
    let filed = now;
    if (!filed || revision > filed.revision) {
      filed = { revision, keys: new Set() };
      this.current.set(production, filed);
      for (const old of now?.keys ?? []) this.lru.delete(old);
    }
    // an answer larger than the whole budget is not cached (lru-cache refuses it)
    this.lru.set(key, answer);
    if (this.lru.has(key)) filed.keys.add(key);
  }

  /**
   * The answer another request is assembling for `key` right now, once it is done; undefined
   * when none is, or when that assembly failed (the caller then assembles its own, and meets
   * its own refusal). A joined answer is a hit: the caller's door is judged like any hit's.
   */
  async joined(key: string): Promise<CachedAnswer | undefined> {
    return this.building.get(key)?.catch(() => undefined);
  }

  /** Assembles the answer for `key` with `make` and keeps it; requests meanwhile may join it. */
  async assemble(key: string, make: () => Promise<CachedAnswer>): Promise<CachedAnswer> {
    if (!this.lru) return make();
    const pending = make();
    this.building.set(key, pending);
    try {
      const answer = await pending;
      this.set(key, answer);
      return answer;
    } finally {
      if (this.building.get(key) === pending) this.building.delete(key);
    }
  }

  /**
   * The answer's body in `encoding`: kept with it after the first request that asks, made once
   * however many ask at the same time. The entry is replaced by one that holds the encoded bytes
   * too, so the bound counts them; an entry pushed out meanwhile is not brought back.
   */
  async encoded(key: string, answer: CachedAnswer, encoding: Encoding): Promise<Buffer> {
    const kept = answer.encoded[encoding];
    if (kept) return kept;
    const slot = `${encoding}:${key}`;
    let pending = this.encoding.get(slot);
    if (!pending) {
      pending = encode(answer.body, encoding).finally(() => this.encoding.delete(slot));
      this.encoding.set(slot, pending);
      const bytes = await pending;
      const lru = this.lru;
      const current = lru?.peek(key);
      if (lru && current !== undefined && current.body === answer.body) {
        lru.set(key, { ...current, encoded: { ...current.encoded, [encoding]: bytes } });
      }
      return bytes;
    }
    return pending;
  }

  /**
   * `revision` of the production committed (here or, as the database or a sibling worker
   * announced it, in another process): its answers filed under an older revision can never be
   * asked for again, so they go now rather than when the next answer is filed.
   */
  retire(productionId: number, revision: number): void {
    const production = String(productionId);
    const filed = this.current.get(production);
    if (!this.lru || !filed || filed.revision >= revision) return;
    this.current.delete(production);
    for (const old of filed.keys) this.lru.delete(old);
  }

  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }

  get entries(): number {
    return this.lru?.size ?? 0;
  }
}

/** `Vary` with Accept-Encoding added to what the route already varies on. */
function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const names =
    vary === undefined
      ? []
      : String(vary)
          .split(',')
          .map((v) => v.trim());
  if (!names.some((n) => n.toLowerCase() === 'accept-encoding')) names.push('Accept-Encoding');
  reply.header('vary', names.filter(Boolean).join(', '));
}

/**
 * Sends the cached answer for `key`, assembling and caching it first on a miss. `build` runs
 * only on a miss, judges the caller's reach itself (as every service does) and answers the
 * payload (and its ETag, for the routes that name one; otherwise the tag is a hash of the
 * bytes); the payload is serialised through the route's response schema exactly as
 * `reply.send` would. On a hit (or when another request was already assembling it, see
 * AnswerCache.joined), `door` judges the caller's reach instead, before anything is sent.
 * Every cached answer carries its ETag, and a matching If-None-Match is answered 304 without a
 * body. The body goes out gzip- or brotli-encoded when the client asks and it is at
 * least COMPRESS_THRESHOLD long, with `Vary: Accept-Encoding` either way.
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
     * a payload to send instead of the cached answer (e.g. the empty answer of a lapsed grant).
     */
    door?: () => Promise<unknown>;
    /** Headers every answer carries (200 and 304 alike; not an error). */
    headers?: Record<string, string>;
  } = {},
): Promise<FastifyReply> {
  let answer = cache.get(key) ?? (await cache.joined(key));
  if (answer) {
    const instead = await options.door?.();
    if (instead !== undefined) return reply.send(instead);
  } else {
    answer = await cache.assemble(key, async () => {
      const built = await build();
      const serialised = reply.serialize(built.payload);
      const body = typeof serialised === 'string' ? ownUtf8(serialised) : Buffer.from(serialised as Buffer);
      return { body, etag: built.etag ?? etagOfBytes(body), encoded: {} };
    });
  }
  reply.headers(options.headers ?? {});
  varyOnEncoding(reply);
  reply.header('etag', answer.etag);
  if (ifNoneMatchHits(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  reply.type('application/json; charset=utf-8');
  const encoding =
    answer.body.length >= COMPRESS_THRESHOLD ? chooseEncoding(request.headers['accept-encoding']) : null;
  if (encoding === null) return reply.send(answer.body);
  const bytes = await cache.encoded(key, answer, encoding);
  return reply.header('content-encoding', encoding).send(bytes);
}
