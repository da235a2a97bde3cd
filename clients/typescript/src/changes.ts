import type { ProdgraphClient } from './client.js';
import { ApiError } from './errors.js';
import type { components } from './openapi.js';

export type Change = components['schemas']['Change'];

export interface FollowOptions {
  /** Start after this cursor (a `cursor` you kept); `now` starts at the newest change; omitted: from the first. */
  after?: string;
  /** Seconds each request waits for a change when there is none (long-poll; default 30, the server clamps). */
  wait?: number;
  /** Changes per request (default: the server's, 100). */
  limit?: number;
  /** Stops following: the iteration ends quietly. */
  signal?: AbortSignal;
  /** Backoff after a failed request, doubling up to maxBackoffMs (defaults 1000 and 30000). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/** The feed as an async iterator; `cursor` is where to resume (persist it after handling a change). */
export interface ChangeFollower extends AsyncIterable<Change> {
  readonly cursor: string | undefined;
}

/** A refusal that asking again cannot cure: a bad key, scope or cursor. */
const final = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', done);
      clearTimeout(timer);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Follows the change feed for good: long-polls, yields every change in commit order, and after
 * a dropped connection or a server error resumes from the last change it yielded, so none is
 * missed or repeated. A bad key, scope or cursor throws ApiError.
 *
 *   const feed = followChanges(client, { after: saved, signal });
 *   for await (const change of feed) { handle(change); saved = feed.cursor; }
 */
export function followChanges(client: ProdgraphClient, options: FollowOptions = {}): ChangeFollower {
  let cursor = options.after;
  const { signal } = options;
  const base = options.backoffMs ?? 1000;
  const max = options.maxBackoffMs ?? 30_000;
  async function* follow(): AsyncGenerator<Change, void, undefined> {
    let failures = 0;
    while (!signal?.aborted) {
      let answer;
      try {
        answer = await client.GET('/api/v1/changes', {
          params: { query: { after: cursor, wait: options.wait ?? 30, limit: options.limit } },
          signal,
        });
      } catch {
        // stopped on purpose; or the network failed after the client's own retries: wait, resume
        if (signal?.aborted) return;
        await pause(Math.min(max, base * 2 ** failures++), signal);
        continue;
      }
      const { data, error, response } = answer;
      if (!data) {
        if (final(response.status)) throw new ApiError(response, error);
        await pause(Math.min(max, base * 2 ** failures++), signal);
        continue;
      }
      failures = 0;
      for (const change of data.changes) {
        cursor = change.cursor;
        yield change;
      }
      cursor = data.next_cursor;
    }
  }
  const iterator = follow();
  return {
    get cursor() {
      return cursor;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
}
