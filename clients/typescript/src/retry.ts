/*
 * Retries below the typed client, so every call (and every page of a walk) is retried on its
 * own, with the very same request: a write keeps its Idempotency-Key, so a retry never writes
 * twice.
 */

export interface RetryOptions {
  /** Attempts after the first (default 3; 0 turns retries off). */
  retries?: number;
  /** The first backoff in milliseconds, doubled on each retry, with jitter (default 250). */
  backoffMs?: number;
  /** No backoff is longer than this (default 8000). */
  maxBackoffMs?: number;
  /** A longer Retry-After is not waited for: the 429 or 503 is answered instead (default 60000). */
  maxRetryAfterMs?: number;
}

type Fetch = (input: Request) => Promise<Response>;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Sent again only when it cannot write twice: a read, or a write carrying its Idempotency-Key. */
const replaySafe = (request: Request): boolean =>
  SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');

/** Retry-After in milliseconds (seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(response: Response, now = Date.now()): number | undefined {
  const value = response.headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

function backoff(attempt: number, o: Required<RetryOptions>): number {
  const ceiling = Math.min(o.maxBackoffMs, o.backoffMs * 2 ** attempt);
  // half fixed, half random: retries spread out without collapsing to nothing
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * How long to wait before sending this request again, or null to answer the response as it is.
 * 429 is refused before anything runs, so it is retried whatever the method; 502, 503 and 504
 * only when the request is replay-safe.
 */
function delayFor(response: Response, attempt: number, safe: boolean, o: Required<RetryOptions>) {
  const { status } = response;
  if (status !== 429 && !(safe && (status === 502 || status === 503 || status === 504))) return null;
  const asked = retryAfterMs(response);
  if (asked === undefined) return backoff(attempt, o);
  return asked > o.maxRetryAfterMs ? null : asked;
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** A fetch that retries network failures, 502/503/504 and 429 (honouring Retry-After). */
export function retryingFetch(inner: Fetch, options: RetryOptions = {}): Fetch {
  const o: Required<RetryOptions> = {
    retries: options.retries ?? 3,
    backoffMs: options.backoffMs ?? 250,
    maxBackoffMs: options.maxBackoffMs ?? 8000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
  };
  return async (request) => {
    const safe = replaySafe(request);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= o.retries;
      // the original stays unsent until the last attempt, so each retry has its body to send
      const sent = last ? request : request.clone();
      let response: Response;
      try {
        response = await inner(sent);
      } catch (err) {
        // a dropped connection may have reached the server: only a replay-safe request goes again
        if (last || !safe || request.signal?.aborted) throw err;
        await sleep(backoff(attempt, o), request.signal);
        continue;
      }
      const wait = last ? null : delayFor(response, attempt, safe, o);
      if (wait === null) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait, request.signal);
    }
  };
}
