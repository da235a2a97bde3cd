import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino } from 'pino';

/** What stands in for a secret in a log line. */
export const REDACTED = '[redacted]';

/*
 * A secret is kept out of the logs three ways, each enough on its own for what it covers:
 * - the request is logged as method, redacted URL and peer: never a header;
 * - any object logged with a `headers` (or `rawHeaders`) member anywhere inside it (a plugin's
 *   options, an HTTP client's error) has every header value but a harmless few replaced;
 * - every line, whatever produced it, is searched for what a secret looks like — an API token,
 *   a media ticket (its dots percent-encoded or not), a Bearer credential, the value of an
 *   `authorization` or `cookie` member — and that is replaced, at every level down to `trace`.
 */

/** An API token (`pgk_` + id + secret, with or without its checksum). */
const TOKEN = /pgk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{20,}/g;
/** A media ticket: `<production>.<key>.<expiry>.<signature>`, the dots perhaps percent-encoded. */
const TICKET = /\d{1,15}(?:\.|%2e)\d{1,15}(?:\.|%2e)\d{1,15}(?:\.|%2e)[A-Za-z0-9_-]{43}/gi;
const BEARER = /\b(Bearer|Basic)(\s|%20|\+)+[^\s"\\,;&]+/gi;
/** A JSON member that holds a credential, whatever the value (a string or an array of strings). */
const CREDENTIAL_MEMBER =
  /"(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token)"\s*:\s*("(?:[^"\\]|\\.)*"|\[(?:[^\]"\\]|"(?:[^"\\]|\\.)*")*\])/gi;

/**
 * Anything in a line that could start one of the shapes above: most lines hold none, and one
 * search for all of them costs less than four replacements that find nothing.
 */
const MAYBE_SECRET =
  /pgk_|bearer|basic|authorization|cookie|x-api-key|x-auth-token|\d(?:\.|%2e)\d{1,15}(?:\.|%2e)\d{1,15}(?:\.|%2e)[A-Za-z0-9_-]{43}/i;

/** Every secret shape in `text` replaced (for a finished log line or any string). */
export function scrubSecrets(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  return text
    .replace(CREDENTIAL_MEMBER, (_m, name: string) => `"${name}":"${REDACTED}"`)
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(TOKEN, REDACTED)
    .replace(TICKET, REDACTED);
}

const holdsSecret = (text: string): boolean => {
  TOKEN.lastIndex = 0;
  TICKET.lastIndex = 0;
  return TOKEN.test(text) || TICKET.test(text);
};

const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/**
 * Query parameters that carry a credential: `t`, the media ticket, under any spelling a
 * client may try (`t`, `T`, `%74`, `t[]`, `t[0]`, `t.x`): only exactly `t` opens a file, but a
 * ticket sent under a near-miss name is still a ticket.
 */
const isTicketName = (name: string): boolean => /^t(?:$|[^a-z0-9_-])/i.test(decoded(name).trim());

function redactPair(pair: string): string {
  const eq = pair.indexOf('=');
  const name = eq < 0 ? pair : pair.slice(0, eq);
  if (isTicketName(name)) return `${name}=${REDACTED}`;
  if (eq >= 0 && holdsSecret(decoded(pair.slice(eq + 1)))) return `${name}=${REDACTED}`;
  return holdsSecret(decoded(pair)) ? REDACTED : pair;
}

/** A path segment, with its `;name=value` parameters (a ticket may hide in either). */
function redactSegment(segment: string): string {
  const [head = '', ...params] = segment.split(';');
  const first = holdsSecret(decoded(head)) ? REDACTED : head;
  return [first, ...params.map(redactPair)].join(';');
}

const MAYBE_SECRET_IN_URL = /[?;%]|pgk_|\d\.\d/i;

/**
 * The URL as logged: the value of every credential-bearing query parameter replaced, whatever
 * its spelling, and any path segment or value that holds a token or a ticket (percent-encoded
 * or not) replaced too, so a ticket never reaches a log line.
 */
export function redactUrl(url: string): string {
  // most URLs carry nothing that could be or hide a credential: no query, no `;` parameter, no
  // percent-encoding, no token prefix, no run of digit-dot-digit a ticket starts with
  if (!MAYBE_SECRET_IN_URL.test(url)) return url;
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).split('/').map(redactSegment).join('/');
  if (q < 0) return path;
  return `${path}?${url
    .slice(q + 1)
    .split('&')
    .map(redactPair)
    .join('&')}`;
}

/** Header values that are kept: they say what a body was, and never carry a credential. */
const HARMLESS_HEADERS = new Set(['content-type', 'content-length', 'transfer-encoding']);

function redactHeaders(headers: object): unknown {
  if (Array.isArray(headers)) {
    // rawHeaders: name, value, name, value, …
    return (headers as unknown[]).map((v, i) =>
      i % 2 === 1 && !HARMLESS_HEADERS.has(String(headers[i - 1]).toLowerCase()) ? REDACTED : v,
    );
  }
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, HARMLESS_HEADERS.has(k.toLowerCase()) ? v : REDACTED]),
  );
}

const isPlain = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null || Array.isArray(v);
};

/**
 * A copy of a logged object with every header collection in it redacted (copying only the
 * branches that change: the logged object itself may still be in use, e.g. a plugin's options).
 */
export function withoutHeaders(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object' || !isPlain(value)) return value;
  let copy: Record<string, unknown> | unknown[] | null = null;
  for (const [k, v] of Object.entries(value) as [string, unknown][]) {
    const next =
      /^(raw)?headers$/i.test(k) && v !== null && typeof v === 'object'
        ? redactHeaders(v)
        : withoutHeaders(v, depth + 1);
    if (next !== v) {
      copy ??= Array.isArray(value) ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) };
      (copy as Record<string, unknown>)[k] = next;
    }
  }
  return copy ?? value;
}

/**
 * Logger options for the service: requests are logged as method, redacted URL and peer (never
 * a header, so never Authorization); header collections inside any logged object are redacted;
 * and every finished line is scrubbed of anything shaped like a token or a ticket.
 */
export function loggerOptions(level: string, stream?: { write(line: string): void }) {
  return {
    level,
    stream: stream ?? bufferedStdout(),
    // `req` and `res` pass through the serializers below, which never output a header; a
    // `headers` member anywhere else is redacted by the log formatter and these paths
    redact: { paths: ['headers.authorization', 'headers.cookie'], censor: REDACTED },
    formatters: {
      log: (object: Record<string, unknown>) => withoutHeaders(object) as Record<string, unknown>,
    },
    hooks: { streamWrite: scrubSecrets },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactUrl(request.url),
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        };
      },
    },
  };
}

/** How long a log line may wait in the buffer before it is written out. */
const LOG_FLUSH_MS = 100;
/** How much is gathered before one write: about 25 request lines. */
const LOG_BATCH_CHARS = 8192;

/**
 * Log lines gathered into one write to standard output: one write per line cost a system call
 * per request. The lines are kept as a list and joined once per batch; sonic-boom's own
 * batching (`minLength`) appends each line to one growing string and measures that string's
 * byte length on every write, which copies the whole batch once per line: nearly twice the
 * cost of a line here, where a line costs what discarding it does (bench/FINDINGS.md).
 *
 * Each batch is written synchronously (pino's default destination; sonic-boom handles partial
 * writes and a full pipe). Written asynchronously, a batch outlived the young generation while
 * its write was in flight, so the collector moved it to the old generation, where it stayed
 * until the next full collection: under a steady read load those batches were about half of
 * what the old generation gathered between full collections, and most of the server's growth
 * in memory (bench/FINDINGS.md, ninth pass). A write of 8 kB to a file or a pipe with room
 * takes microseconds; a log reader that stops reading holds the server back rather than
 * letting unwritten lines pile up in its memory.
 */
export class LineBatcher {
  private lines: string[] = [];
  private chars = 0;

  /** @param out writes each batch before it returns (sonic-boom, synchronous) */
  constructor(
    private readonly out: { write(chunk: string): unknown },
    private readonly batchChars = LOG_BATCH_CHARS,
  ) {}

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.flush();
  }

  /** Writes what is gathered. */
  flush(): void {
    if (this.lines.length === 0) return;
    const chunk = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.out.write(chunk);
  }
}

/**
 * Standard output written in batches of lines: written out once 8 kB are waiting, and at least
 * every LOG_FLUSH_MS, so a quiet server's lines still appear at once to whoever reads them;
 * what is gathered is written when the process exits.
 */
let stdout: LineBatcher | undefined;

function bufferedStdout(): LineBatcher {
  // one per process, however many apps it builds (the tests build many)
  if (stdout) return stdout;
  const out = new LineBatcher(pino.destination({ dest: 1, sync: true }));
  setInterval(() => out.flush(), LOG_FLUSH_MS).unref();
  process.once('exit', () => out.flush());
  stdout = out;
  return out;
}

/** Replies whose line is written already (a stream cut short), so the close does not add another. */
const logged = new WeakSet<FastifyReply>();

/**
 * One log line per request, when it is answered (`request completed`, at info, or `request
 * errored` at error): the method, the redacted URL, the peer, the status and the time taken.
 * A request the client gives up on is logged too, with the same method and URL: `request
 * aborted` (`aborted: true`, no status: none was sent) when it goes before the answer, `stream
 * closed prematurely` (the status sent, `aborted: true`) when it goes while the answer streams.
 * Fastify's own logging also writes a line as each request arrives, which cost as much as the
 * rest of a small request; that line is written at debug, for whoever traces a request that
 * never completes. Every other line Fastify writes (errors, routes not found) is unchanged.
 */
export class RequestLog extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (request.log.level === 'debug' || request.log.level === 'trace')
      request.log.debug({ req: request }, 'incoming request');
    // a response closed before it finished: the client went away (a finished one is logged below)
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished || logged.has(reply)) return;
      reply.log.info({ req: request, aborted: true, responseTime: reply.elapsedTime }, 'request aborted');
    });
  }

  override streamError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
    logged.add(reply);
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    // the client went away while the answer streamed: logged with what was asked and the status sent
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE')
      reply.log.info({ ...line, aborted: true }, 'stream closed prematurely');
    else
      reply.log.warn({ ...line, err: error }, 'response terminated with an error with headers already sent');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) {
      logged.add(reply);
      reply.log.error({ ...line, err: error }, 'request errored');
    } else reply.log.info(line, 'request completed');
  }
}
