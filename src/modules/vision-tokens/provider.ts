import type { VisionProviderConfig } from '../../config.js';

/**
 * A hosted generation provider that exchanges the production's credential for a short-lived
 * client token limited to one model. The service never hands out the credential itself.
 */
export interface SessionTokenProvider {
  readonly name: string;
  mint(request: TokenRequest): Promise<MintedToken>;
}

export interface TokenRequest {
  model: string;
  lifetimeSeconds: number;
}

export interface MintedToken {
  token: string;
  expiresAt: Date;
}

export type FailureReason = 'unreachable' | 'timeout' | 'refused' | 'garbage';

/**
 * Why a mint failed, in words safe to show a client: never the provider's body, never the
 * credential. `status` is the provider's HTTP status when it answered one.
 */
export class ProviderFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
    readonly status?: number,
    /** The network error code (ECONNREFUSED, ENOTFOUND, …) when the provider was not reached. */
    readonly networkCode?: string,
  ) {
    super(message);
    this.name = 'ProviderFailure';
  }
}

/** Largest provider answer read; a token response is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_TOKEN_CHARS = 8192;
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

async function readBounded(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw new ProviderFailure('garbage', 'answered with an oversized body');
  }
  if (!res.body) return '';
  const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ProviderFailure('garbage', 'answered with an oversized body');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `expires_at` as ISO-8601 or Unix seconds, else `expires_in` seconds, else what was asked for. */
function expiryOf(answer: Record<string, unknown>, requested: number, now: number): Date | null {
  const at = answer.expires_at;
  const inSeconds = answer.expires_in;
  let ms: number;
  if (typeof at === 'string') ms = Date.parse(at);
  else if (typeof at === 'number') ms = at * 1000;
  else if (at !== undefined && at !== null) return null;
  else if (typeof inSeconds === 'number') ms = now + inSeconds * 1000;
  else if (inSeconds !== undefined && inSeconds !== null) return null;
  else ms = now + requested * 1000;
  // a token that is already dead, or one "valid" for more than a day, is not what was asked for
  if (!Number.isFinite(ms) || ms <= now || ms > now + 86_400_000) return null;
  return new Date(Math.floor(ms / 1000) * 1000);
}

export function parseTokenAnswer(text: string, requested: number, now = Date.now()): MintedToken {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new ProviderFailure('garbage', 'answered with something other than JSON');
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
    throw new ProviderFailure('garbage', 'answered without a token');
  }
  const fields = answer as Record<string, unknown>;
  const token = fields.token;
  if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS || !TOKEN_CHARS.test(token)) {
    throw new ProviderFailure('garbage', 'answered without a usable token');
  }
  const expiresAt = expiryOf(fields, requested, now);
  if (!expiresAt) throw new ProviderFailure('garbage', 'answered with an unusable expiry');
  return { token, expiresAt };
}

export interface HttpProviderOptions {
  timeoutMs: number;
  /** Told why a mint failed (reason and status only); the caller logs it. */
  onFailure?: (failure: ProviderFailure) => void;
}

/**
 * The common shape of hosted "mint a temporary client token" endpoints: POST
 * `{"model", "expires_in"}` with `Authorization: Bearer <credential>`, answered by
 * `{"token", "expires_at" | "expires_in"}`.
 */
export class HttpTokenProvider implements SessionTokenProvider {
  readonly name: string;

  constructor(
    private readonly config: VisionProviderConfig,
    private readonly options: HttpProviderOptions,
  ) {
    this.name = config.name;
  }

  async mint(request: TokenRequest): Promise<MintedToken> {
    try {
      return await this.exchange(request);
    } catch (err) {
      const failure =
        err instanceof ProviderFailure ? err : new ProviderFailure('unreachable', 'could not be reached');
      this.options.onFailure?.(failure);
      throw failure;
    }
  }

  private async exchange(request: TokenRequest): Promise<MintedToken> {
    // one deadline for connecting, answering and reading the answer
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let res: Response;
    try {
      res = await fetch(this.config.tokenUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.config.credential.reveal()}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ model: request.model, expires_in: request.lifetimeSeconds }),
        // a redirect could carry the credential somewhere nobody configured
        redirect: 'error',
        signal,
      });
    } catch (err) {
      throw this.transportFailure(err, signal);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new ProviderFailure('refused', `refused the request (HTTP ${res.status})`, res.status);
    }
    let text: string;
    try {
      text = await readBounded(res);
    } catch (err) {
      if (err instanceof ProviderFailure) throw err;
      throw this.transportFailure(err, signal);
    }
    return parseTokenAnswer(text, request.lifetimeSeconds);
  }

  private transportFailure(err: unknown, signal: AbortSignal): ProviderFailure {
    if (signal.aborted || (err instanceof Error && err.name === 'TimeoutError')) {
      return new ProviderFailure('timeout', `did not answer within ${this.options.timeoutMs} ms`);
    }
    const cause =
      err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
    if (cause?.message === 'unexpected redirect') {
      return new ProviderFailure('refused', 'answered with a redirect, which is not followed');
    }
    const code = typeof cause?.code === 'string' ? cause.code : undefined;
    return new ProviderFailure('unreachable', 'could not be reached', undefined, code);
  }
}
