/*
 * Retries below the typed client, so every call (and every page of a walk) is retried on its
 * own, with the very same request: a write keeps its Idempotency-Key, so a retry never writes
 * twice. Time limits live here too: each attempt is bounded (`timeoutMs`), and so, when asked,
 * is the whole call (`deadlineMs`).
 */

/** What a call rejects with when it ran out of time: `kind` says which bound it met. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';

  constructor(
    readonly kind: 'attempt' | 'deadline',
    readonly ms: number,
  ) {
    super(
      kind === 'attempt'
        ? `no answer within ${ms} ms (timeoutMs); the server or the network is not answering`
        : `the call did not finish within its deadline of ${ms} ms (deadlineMs)`,
    );
  }
}

/** Each wait of an attempt is bounded by this unless the client says otherwise. */
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface RetryOptions {
  /**
   * Milliseconds each wait of one attempt may take (default 30000): for the answer's head
   * (connecting, sending, the server's work), then for each chunk of its body. A timed-out
   * attempt counts as a failed one and is retried when the request is replay-safe. The change
   * feed's long poll adds its `wait` to it. 0 turns it off.
   */
  timeoutMs?: number;
  /**
   * Milliseconds a whole call may take, its retries, pauses and answer body included (default
   * none). A retry, backoff or Retry-After that would outlast it is not started: the last answer
   * is handed back, or the call rejects with a TimeoutError. Leave it unset for a long download
   * read as a stream: its chunks are bounded by `timeoutMs` however long the file takes.
   */
  deadlineMs?: number;
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

function backoff(attempt: number, o: Pick<Required<RetryOptions>, 'backoffMs' | 'maxBackoffMs'>): number {
  const ceiling = Math.min(o.maxBackoffMs, o.backoffMs * 2 ** attempt);
  // half fixed, half random: retries spread out without collapsing to nothing
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * How long to wait before sending this request again, or null to answer the response as it is.
 * 429 is refused before anything runs, so it is retried whatever the method; 502, 503 and 504
 * only when the request is replay-safe.
 */
function delayFor(
  response: Response,
  attempt: number,
  safe: boolean,
  o: Pick<Required<RetryOptions>, 'backoffMs' | 'maxBackoffMs' | 'maxRetryAfterMs'>,
) {
  const { status } = response;
  if (status !== 429 && !(safe && (status === 502 || status === 503 || status === 504))) return null;
  const asked = retryAfterMs(response);
  if (asked === undefined) return backoff(attempt, o);
  return asked > o.maxRetryAfterMs ? null : asked;
}

/** A timer that never keeps a Node process alive on its own. */
function timer(ms: number, fire: () => void): () => void {
  const handle = setTimeout(fire, ms);
  (handle as { unref?: () => void }).unref?.();
  return () => clearTimeout(handle);
}

/** A signal that aborts with the first of `signals` to abort, and its reason. */
function anyOf(signals: Array<AbortSignal | null | undefined>): AbortSignal {
  const controller = new AbortController();
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}

/** The change feed's long poll holds its answer up to `wait` seconds by design: that time is not a stall. */
function longPollMs(request: Request): number {
  const url = new URL(request.url);
  if (request.method !== 'GET' || !url.pathname.endsWith('/api/v1/changes')) return 0;
  const wait = Number(url.searchParams.get('wait') ?? 0);
  return Number.isFinite(wait) && wait > 0 ? wait * 1000 : 0;
}

/** Statuses whose answer has no body to bound. */
const NO_BODY = new Set([204, 205, 304]);

/**
 * The answer with its body bounded: each read of a chunk waits at most `ms` (only while a read
 * is pending, so a slow consumer is never cut off), then the attempt is aborted.
 */
function boundedBody(response: Response, ms: number, abort: (reason: unknown) => void): Response {
  if (!response.body || ms <= 0 || NO_BODY.has(response.status)) return response;
  const reader = response.body.getReader();
  let cut: TimeoutError | undefined;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const stop = timer(ms, () => abort((cut = new TimeoutError('attempt', ms))));
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.error(cut ?? err);
      } finally {
        stop();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const bounded = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // what a caller may read off the answer besides its status, headers and body
  Object.defineProperties(bounded, {
    url: { value: response.url },
    redirected: { value: response.redirected },
  });
  return bounded;
}

/** Rejects with the signal's reason when it aborts (and never settles otherwise). */
function abortion(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Runtimes whose fetch streams a request body over HTTP/1.1 (`duplex: 'half'`): Node, Deno and
 * Bun. Browsers stream one only over HTTP/2, so there fetch sends an upload by itself.
 */
export const STREAMS_UPLOADS = (() => {
  const g = globalThis as { process?: { versions?: { node?: string } }; Deno?: unknown; Bun?: unknown };
  return Boolean(g.process?.versions?.node ?? g.Deno ?? g.Bun);
})();

/** Request bodies that can be read only once (a stream made as it is sent): never cloned, never sent again. */
const ONE_SHOT = new WeakSet<ReadableStream<Uint8Array>>();

/** Marks a stream as a body sent once: retrying it would mean holding all of it in memory. */
export function sendOnce(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  ONE_SHOT.add(body);
  return body;
}

/** An upload: a body that is not JSON (a form with files, bytes), whose sending may take long. */
const isUpload = (request: Request) =>
  request.body !== null && !/^application\/json\b/i.test(request.headers.get('content-type') ?? '');

/** The body as it is sent, `onChunk` called as the transport takes each chunk of it. */
function watched(body: ReadableStream<Uint8Array>, onChunk: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      onChunk();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * One attempt: the request sent under a signal that aborts on the caller's signal, the call's
 * deadline, or this attempt's timeout. The timeout bounds each wait: for the transport to take
 * the next chunk of an upload (where the runtime streams it; elsewhere an upload's sending is
 * bounded by the deadline alone), for the answer's head, then for each chunk of its body.
 */
async function attempt(inner: Fetch, request: Request, timeoutMs: number, deadline: AbortSignal | undefined) {
  const own = new AbortController();
  const signal = anyOf([request.signal, deadline, own.signal]);
  let stop = () => {};
  const rearm = () => {
    stop();
    if (timeoutMs > 0) stop = timer(timeoutMs, () => own.abort(new TimeoutError('attempt', timeoutMs)));
  };
  const upload = isUpload(request);
  if (!upload || STREAMS_UPLOADS) rearm();
  const init: RequestInit & { duplex?: 'half' } =
    upload && STREAMS_UPLOADS ? { signal, body: watched(request.body!, rearm), duplex: 'half' } : { signal };
  try {
    const sent = inner(new Request(request, init));
    // Answered by the abort itself, not only by the runtime's fetch: one aborted while its
    // connection was still being made can go on waiting for the runtime's own timeout (minutes)
    const response = await Promise.race([sent, abortion(signal)]);
    return boundedBody(response, timeoutMs, (reason) => own.abort(reason));
  } catch (err) {
    // the reason the attempt was cut short, rather than the runtime's generic AbortError
    throw signal.aborted ? signal.reason : err;
  } finally {
    stop();
  }
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

/** Milliseconds left before the deadline (Infinity without one). */
const leftOf = (deadlineAt: number) => deadlineAt - Date.now();

/**
 * A fetch that retries network failures (a timed-out attempt among them), 502/503/504 and 429
 * (honouring Retry-After), each attempt bounded by `timeoutMs` and the whole call, when asked,
 * by `deadlineMs`.
 */
export function retryingFetch(inner: Fetch, options: RetryOptions = {}): Fetch {
  const o: Required<Omit<RetryOptions, 'deadlineMs'>> = {
    retries: options.retries ?? 3,
    backoffMs: options.backoffMs ?? 250,
    maxBackoffMs: options.maxBackoffMs ?? 8000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  const { deadlineMs } = options;
  return async (request) => {
    const safe = replaySafe(request);
    const retries = request.body && ONE_SHOT.has(request.body) ? 0 : o.retries;
    const timeoutMs = o.timeoutMs > 0 ? o.timeoutMs + longPollMs(request) : 0;
    const call = new AbortController();
    const deadlineAt = deadlineMs === undefined ? Infinity : Date.now() + deadlineMs;
    if (deadlineMs !== undefined)
      timer(deadlineMs, () => call.abort(new TimeoutError('deadline', deadlineMs)));
    // a wait (backoff, Retry-After) ends early on the caller's signal or the deadline
    const waits = anyOf([request.signal, call.signal]);
    for (let attemptNo = 0; ; attemptNo++) {
      const last = attemptNo >= retries;
      // the original stays unsent until the last attempt, so each retry has its body to send
      const sent = last ? request : request.clone();
      let response: Response;
      try {
        response = await attempt(inner, sent, timeoutMs, deadlineMs === undefined ? undefined : call.signal);
      } catch (err) {
        // a dropped connection may have reached the server: only a replay-safe request goes again
        if (last || !safe || request.signal?.aborted || call.signal.aborted) throw err;
        const pause = backoff(attemptNo, o);
        if (pause >= leftOf(deadlineAt)) throw err;
        await sleep(pause, waits);
        continue;
      }
      const wait = last ? null : delayFor(response, attemptNo, safe, o);
      if (wait === null || wait >= leftOf(deadlineAt)) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait, waits);
    }
  };
}
