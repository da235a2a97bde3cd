import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { NetworkConfigError, parseCidrList, parseTrustProxy, type Cidr } from './config-network.js';

/** Everything the service reads from its environment, read once and validated at start-up. */
export interface Config {
  db: DbTarget;
  mediaDir: string;
  host: string;
  port: number;
  /** Secret that signs media tickets; derived per process when not given, so tickets die with a restart. */
  ticketSecret: string | null;
  limits: Limits;
  logLevel: string;
  vision: VisionConfig;
  /** Browser origins allowed to call the API (CORS); empty: no CORS headers at all. */
  corsOrigins: string[];
  rateLimit: RateLimitConfig;
  timeouts: Timeouts;
  /** Bytes of assembled answers kept in memory (src/http/answer-cache.ts); 0 keeps none. */
  answerCacheBytes: number;
  webhooks: WebhookConfig;
  /** The longest a change feed long-poll (`wait`) is held, seconds; 0 turns long-polling off. */
  feedMaxWaitSeconds: number;
  /**
   * How often waiting readers look for other processes' commits where nothing announces them
   * (SQLite; PostgreSQL while its listening connection is down), milliseconds.
   */
  changePollMs: number;
  /** Whose X-Forwarded-For is believed for the client's address (Fastify's trustProxy; PRODGRAPH_TRUST_PROXY). */
  trustProxy: boolean | string[];
  /** PostgreSQL: how long a request waits for a database connection before it is refused (503). */
  dbConnectTimeoutMs: number;
  /** A listener of its own serving only GET /metrics without a key; null: none (GET /metrics takes a `metrics` key). */
  metricsListener: { host: string; port: number } | null;
  /**
   * Server processes `serve` runs (src/cluster/): every core by default on PostgreSQL, one on
   * SQLite, where reads scale with workers but every write still waits for the one writer.
   */
  workers: number;
}

export interface RateLimitConfig {
  /** Requests one API key (or, before a key is known, one client address) may make per window; null: off. */
  max: number | null;
  windowMs: number;
}

/** How long a slow or stalled client may hold a connection, milliseconds. */
export interface Timeouts {
  /** Headers must have arrived within this (Node's headersTimeout). */
  headersMs: number;
  /** The whole request, body included, must have arrived within this (Node's requestTimeout). */
  requestMs: number;
  /** A socket with no traffic either way for this long is closed (a client that never reads). */
  idleMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
  /** On SIGTERM/SIGINT, in-flight requests get this long to finish before the process exits anyway. */
  shutdownMs: number;
  /**
   * On SIGTERM, how long the server keeps serving (while /healthz answers 503, so a balancer
   * stops sending it requests) before it stops taking connections; 0: stop at once.
   */
  drainMs: number;
}

/** How webhook deliveries are made (src/modules/webhooks/worker.ts). */
export interface WebhookConfig {
  /** How long one delivery may take before it counts as failed. */
  timeoutMs: number;
  /** The first retry's delay; each further failure doubles it, up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * Private, loopback and other internal ranges a webhook may reach (PRODGRAPH_WEBHOOK_ALLOW);
   * empty: public addresses only. Link-local and cloud metadata addresses are never reached.
   */
  allow: Cidr[];
}

export type DbTarget = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export interface Limits {
  /** Largest single uploaded file (submissions, versions), bytes. */
  uploadBytes: number;
  /** Most files in one turnover submission. */
  submissionFiles: number;
  /** Most events in one storage batch. */
  eventBatch: number;
  /** Largest POST /mcp body (a JSON-RPC message; submissions carry their files in base64), bytes. */
  mcpBodyBytes: number;
  /** Most memory one image decode may take (media proxies, look briefs), bytes (src/media/decode.ts). */
  decodeBytes: number;
}

export class ConfigError extends Error {}

export const DEFAULT_DB = './data/prodgraph.db';
export const DEFAULT_MEDIA = './data/media';

export function parseDbTarget(raw: string): DbTarget {
  const value = raw.trim();
  if (value === '') throw new ConfigError('database: empty --db / PRODGRAPH_DB');
  if (/^postgres(ql)?:\/\//i.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new ConfigError(`database: "${value}" is not a valid PostgreSQL URL`);
    }
    return { dialect: 'postgres', url: value };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ConfigError(
      `database: unsupported URL scheme in "${value}" (use postgres:// or a SQLite path)`,
    );
  }
  const path = value.startsWith('sqlite:') ? value.slice('sqlite:'.length) : value;
  if (path === '') throw new ConfigError('database: "sqlite:" needs a file path');
  return { dialect: 'sqlite', path: path === ':memory:' ? path : resolve(path) };
}

function positiveInt(
  name: string,
  raw: string | undefined,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name}: "${raw}" is not a whole number`);
  const n = Number(raw);
  if (n < 1 || n > max) throw new ConfigError(`${name}: ${n} is out of range (1..${max})`);
  return n;
}

export interface ConfigInput {
  db?: string;
  media?: string;
  host?: string;
  port?: string;
  workers?: string;
  drainMs?: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** How much a request may carry. */
function loadLimits(env: NodeJS.ProcessEnv): Config['limits'] {
  return {
    uploadBytes: positiveInt('PRODGRAPH_MAX_UPLOAD_BYTES', env.PRODGRAPH_MAX_UPLOAD_BYTES, 512 * 1024 * 1024),
    submissionFiles: positiveInt('PRODGRAPH_MAX_SUBMISSION_FILES', env.PRODGRAPH_MAX_SUBMISSION_FILES, 50),
    eventBatch: positiveInt('PRODGRAPH_MAX_EVENT_BATCH', env.PRODGRAPH_MAX_EVENT_BATCH, 10_000),
    mcpBodyBytes: positiveInt(
      'PRODGRAPH_MAX_MCP_BODY_BYTES',
      env.PRODGRAPH_MAX_MCP_BODY_BYTES,
      32 * 1024 * 1024,
    ),
    decodeBytes:
      boundedInt('PRODGRAPH_MAX_DECODE_MB', env.PRODGRAPH_MAX_DECODE_MB, 128, 1, 16_384) * 1024 * 1024,
  };
}

/** How long a client, a request and a shutdown may take. */
function loadTimeouts(env: NodeJS.ProcessEnv, drain: string | undefined): Config['timeouts'] {
  return {
    drainMs: drainMs(drain ?? env.PRODGRAPH_DRAIN_MS),
    headersMs: boundedInt(
      'PRODGRAPH_HEADERS_TIMEOUT_MS',
      env.PRODGRAPH_HEADERS_TIMEOUT_MS,
      30_000,
      100,
      600_000,
    ),
    requestMs: boundedInt(
      'PRODGRAPH_REQUEST_TIMEOUT_MS',
      env.PRODGRAPH_REQUEST_TIMEOUT_MS,
      3_600_000,
      100,
      86_400_000,
    ),
    idleMs: boundedInt('PRODGRAPH_IDLE_TIMEOUT_MS', env.PRODGRAPH_IDLE_TIMEOUT_MS, 60_000, 100, 3_600_000),
    keepAliveMs: boundedInt(
      'PRODGRAPH_KEEP_ALIVE_TIMEOUT_MS',
      env.PRODGRAPH_KEEP_ALIVE_TIMEOUT_MS,
      5_000,
      100,
      600_000,
    ),
    shutdownMs: boundedInt(
      'PRODGRAPH_SHUTDOWN_TIMEOUT_MS',
      env.PRODGRAPH_SHUTDOWN_TIMEOUT_MS,
      30_000,
      100,
      600_000,
    ),
  };
}

/** Flags win over the environment; the environment wins over defaults. */
export function loadConfig(flags: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.PRODGRAPH_LOG_LEVEL ?? env.LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`PRODGRAPH_LOG_LEVEL: "${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`);
  }
  const secret = env.PRODGRAPH_TICKET_SECRET;
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('PRODGRAPH_TICKET_SECRET: must be at least 32 characters');
  }
  const host = flags.host ?? env.HOST ?? '127.0.0.1';
  if (host.trim() === '') throw new ConfigError('host: empty');
  return {
    db: parseDbTarget(flags.db ?? env.PRODGRAPH_DB ?? DEFAULT_DB),
    mediaDir: resolve(flags.media ?? env.PRODGRAPH_MEDIA ?? DEFAULT_MEDIA),
    host,
    port: positiveInt('port', flags.port ?? env.PORT, 8080, 65535),
    ticketSecret: secret ?? null,
    logLevel,
    limits: loadLimits(env),
    vision: loadVisionConfig(env),
    corsOrigins: parseOrigins(env.PRODGRAPH_CORS_ORIGINS),
    rateLimit: parseRateLimit(env),
    timeouts: loadTimeouts(env, flags.drainMs),
    answerCacheBytes: cacheMegabytes(env.PRODGRAPH_ANSWER_CACHE_MB) * 1024 * 1024,
    webhooks: loadWebhookConfig(env),
    feedMaxWaitSeconds: feedMaxWait(env.PRODGRAPH_FEED_MAX_WAIT_SECONDS),
    changePollMs: boundedInt('PRODGRAPH_CHANGE_POLL_MS', env.PRODGRAPH_CHANGE_POLL_MS, 250, 10, 3_600_000),
    trustProxy: network(() => parseTrustProxy(env.PRODGRAPH_TRUST_PROXY)),
    metricsListener: parseMetricsListener(env),
    workers: workerCount(flags.workers ?? env.PRODGRAPH_WORKERS, flags.db ?? env.PRODGRAPH_DB ?? DEFAULT_DB),
    dbConnectTimeoutMs: boundedInt(
      'PRODGRAPH_DB_CONNECT_TIMEOUT_MS',
      env.PRODGRAPH_DB_CONNECT_TIMEOUT_MS,
      5000,
      100,
      120_000,
    ),
  };
}

/** Most server processes `serve` starts, whatever the machine. */
export const MAX_WORKERS = 64;

/** `--workers N`, `auto` (one per core) or nothing: every core on PostgreSQL, one on SQLite. */
function workerCount(raw: string | undefined, db: string): number {
  const value = raw?.trim();
  const cores = Math.min(availableParallelism(), MAX_WORKERS);
  if (value === 'auto') return cores;
  if (value === undefined || value === '') return parseDbTarget(db).dialect === 'postgres' ? cores : 1;
  return positiveInt('workers (--workers / PRODGRAPH_WORKERS)', value, 1, MAX_WORKERS);
}

/** The network settings' refusals, as every other setting's. */
function network<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof NetworkConfigError) throw new ConfigError(err.message);
    throw err;
  }
}

/**
 * PRODGRAPH_METRICS_PORT opens the scrape listener, on loopback unless PRODGRAPH_METRICS_HOST
 * says otherwise (it answers without a key: whoever reaches the port reads the metrics).
 */
function parseMetricsListener(env: NodeJS.ProcessEnv): Config['metricsListener'] {
  const host = env.PRODGRAPH_METRICS_HOST?.trim() || '127.0.0.1';
  if (env.PRODGRAPH_METRICS_PORT === undefined || env.PRODGRAPH_METRICS_PORT.trim() === '') {
    if (env.PRODGRAPH_METRICS_HOST)
      throw new ConfigError('PRODGRAPH_METRICS_HOST: set PRODGRAPH_METRICS_PORT as well');
    return null;
  }
  return { host, port: positiveInt('PRODGRAPH_METRICS_PORT', env.PRODGRAPH_METRICS_PORT, 0, 65535) };
}

/** `https://a.example,https://b.example`: exact origins only, no wildcard (credentials travel in a header). */
function parseOrigins(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const origins = raw.split(',').map((o) => o.trim());
  for (const o of origins) {
    let url: URL;
    try {
      url = new URL(o);
    } catch {
      throw new ConfigError(`PRODGRAPH_CORS_ORIGINS: "${o}" is not an origin (like https://tools.example)`);
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== o) {
      throw new ConfigError(
        `PRODGRAPH_CORS_ORIGINS: "${o}" is not an origin (scheme, host and port only, like https://tools.example)`,
      );
    }
  }
  return [...new Set(origins)];
}

function parseRateLimit(env: NodeJS.ProcessEnv): RateLimitConfig {
  const raw = env.PRODGRAPH_RATE_LIMIT?.trim();
  const windowMs = boundedInt(
    'PRODGRAPH_RATE_LIMIT_WINDOW_MS',
    env.PRODGRAPH_RATE_LIMIT_WINDOW_MS,
    60_000,
    1000,
    3_600_000,
  );
  if (raw === 'off') return { max: null, windowMs };
  return { max: positiveInt('PRODGRAPH_RATE_LIMIT', raw, 1200, 1_000_000), windowMs };
}

const DEFAULT_ANSWER_CACHE_MB = 64;

function cacheMegabytes(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_ANSWER_CACHE_MB;
  if (!/^\d{1,5}$/.test(raw.trim())) {
    throw new ConfigError(
      `PRODGRAPH_ANSWER_CACHE_MB: "${raw}" is not a whole number of megabytes (0 turns the cache off)`,
    );
  }
  return Number(raw);
}

/**
 * A value that must never reach a log line, an error or a response: it prints as a
 * placeholder however it is serialised, and only `reveal()` gives it up.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[secret]';
  }
  toJSON(): string {
    return '[secret]';
  }
  [inspect.custom](): string {
    return '[secret]';
  }
}

export interface VisionProviderConfig {
  /** Shown to clients as `provider`; the token URL's host unless named. */
  name: string;
  tokenUrl: URL;
  credential: Secret;
}

export interface VisionConfig {
  /** null: the session-token route answers 503 until a provider is configured. */
  provider: VisionProviderConfig | null;
  /** Exactly two model identifiers a client token may be limited to; the first is the default. */
  models: readonly [string, string];
  tokenLifetimeSeconds: number;
  timeoutMs: number;
  /** Session tokens one API key may mint per minute. */
  mintsPerMinute: number;
}

/** Model identifiers of the two demo generation models (image and video). */
export const DEFAULT_VISION_MODELS = ['image-standard', 'video-standard'] as const;

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;
// visible ASCII only: the credential goes into a header, and a header error would quote it
const CREDENTIAL = /^[\x21-\x7e]{1,4096}$/;

function boundedInt(name: string, raw: string | undefined, fallback: number, min: number, max: number) {
  const n = positiveInt(name, raw, fallback, max);
  if (n < min) throw new ConfigError(`${name}: ${n} is out of range (${min}..${max})`);
  return n;
}

function readCredential(env: NodeJS.ProcessEnv): string | undefined {
  const inline = env.PRODGRAPH_VISION_CREDENTIAL;
  const file = env.PRODGRAPH_VISION_CREDENTIAL_FILE;
  if (inline !== undefined && inline !== '' && file !== undefined && file !== '') {
    throw new ConfigError('PRODGRAPH_VISION_CREDENTIAL and PRODGRAPH_VISION_CREDENTIAL_FILE: set only one');
  }
  let value = inline;
  if (file !== undefined && file !== '') {
    try {
      value = readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(`PRODGRAPH_VISION_CREDENTIAL_FILE: cannot read ${file} (${code})`);
    }
    // files written by editors and secret managers end with a newline
    value = value.replace(/\r?\n$/, '');
  }
  if (value === undefined || value === '') return undefined;
  if (!CREDENTIAL.test(value)) {
    throw new ConfigError(
      'PRODGRAPH_VISION_CREDENTIAL: must be 1 to 4096 visible ASCII characters (no spaces or line breaks)',
    );
  }
  return value;
}

function parseModels(raw: string | undefined): readonly [string, string] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_VISION_MODELS;
  const models = raw.split(',').map((m) => m.trim());
  const [first, second] = models;
  if (models.length !== 2 || first === undefined || second === undefined || first === second) {
    throw new ConfigError('PRODGRAPH_VISION_MODELS: must name exactly two different models, comma-separated');
  }
  for (const m of models) {
    if (!MODEL_ID.test(m)) {
      throw new ConfigError(
        `PRODGRAPH_VISION_MODELS: "${m}" is not a model identifier (letters, digits and . _ : / @ + -, at most 128)`,
      );
    }
  }
  return [first, second];
}

function parseTokenUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PRODGRAPH_VISION_TOKEN_URL: "${raw}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError('PRODGRAPH_VISION_TOKEN_URL: must be an http:// or https:// URL');
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(
      'PRODGRAPH_VISION_TOKEN_URL: must not carry a user or password; put the credential in PRODGRAPH_VISION_CREDENTIAL',
    );
  }
  return url;
}

/** 0..600000 ms (--drain-ms / PRODGRAPH_DRAIN_MS); 5 s by default, time for a balancer's health checks to notice. */
function drainMs(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 5_000;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) > 600_000) {
    throw new ConfigError(
      `drain (--drain-ms / PRODGRAPH_DRAIN_MS): "${raw}" is not a whole number of milliseconds from 0 to 600000`,
    );
  }
  return Number(raw);
}

/** 0..300: a proxy in front may close idle requests sooner than the default 30 s. */
function feedMaxWait(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 30;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) > 300) {
    throw new ConfigError(
      `PRODGRAPH_FEED_MAX_WAIT_SECONDS: "${raw}" is not a whole number of seconds from 0 to 300`,
    );
  }
  return Number(raw);
}

export function loadWebhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  // a delivery must end well inside the subscription's lease (60 s, see worker.ts)
  const timeoutMs = boundedInt(
    'PRODGRAPH_WEBHOOK_TIMEOUT_MS',
    env.PRODGRAPH_WEBHOOK_TIMEOUT_MS,
    10_000,
    100,
    30_000,
  );
  const retryBaseMs = boundedInt(
    'PRODGRAPH_WEBHOOK_RETRY_BASE_MS',
    env.PRODGRAPH_WEBHOOK_RETRY_BASE_MS,
    1000,
    10,
    3_600_000,
  );
  const retryMaxMs = boundedInt(
    'PRODGRAPH_WEBHOOK_RETRY_MAX_MS',
    env.PRODGRAPH_WEBHOOK_RETRY_MAX_MS,
    3_600_000,
    10,
    86_400_000,
  );
  if (retryMaxMs < retryBaseMs) {
    throw new ConfigError(
      'PRODGRAPH_WEBHOOK_RETRY_MAX_MS: must not be below PRODGRAPH_WEBHOOK_RETRY_BASE_MS',
    );
  }
  const allow = network(() => parseCidrList('PRODGRAPH_WEBHOOK_ALLOW', env.PRODGRAPH_WEBHOOK_ALLOW).ranges);
  return { timeoutMs, retryBaseMs, retryMaxMs, allow };
}

export function loadVisionConfig(env: NodeJS.ProcessEnv): VisionConfig {
  const rawUrl = env.PRODGRAPH_VISION_TOKEN_URL?.trim() || undefined;
  const credential = readCredential(env);
  let provider: VisionProviderConfig | null = null;
  if (rawUrl !== undefined || credential !== undefined) {
    if (rawUrl === undefined) {
      throw new ConfigError('PRODGRAPH_VISION_TOKEN_URL: required when a vision credential is set');
    }
    if (credential === undefined) {
      throw new ConfigError(
        'PRODGRAPH_VISION_CREDENTIAL (or PRODGRAPH_VISION_CREDENTIAL_FILE): required when PRODGRAPH_VISION_TOKEN_URL is set',
      );
    }
    const tokenUrl = parseTokenUrl(rawUrl);
    const name = env.PRODGRAPH_VISION_PROVIDER?.trim() || tokenUrl.hostname;
    if (name.length > 100 || /\p{Cc}/u.test(name)) {
      throw new ConfigError('PRODGRAPH_VISION_PROVIDER: at most 100 characters, no control characters');
    }
    provider = { name, tokenUrl, credential: new Secret(credential) };
  }
  return {
    provider,
    models: parseModels(env.PRODGRAPH_VISION_MODELS),
    tokenLifetimeSeconds: boundedInt(
      'PRODGRAPH_VISION_TOKEN_TTL',
      env.PRODGRAPH_VISION_TOKEN_TTL,
      300,
      10,
      3600,
    ),
    timeoutMs: boundedInt('PRODGRAPH_VISION_TIMEOUT_MS', env.PRODGRAPH_VISION_TIMEOUT_MS, 5000, 100, 60_000),
    mintsPerMinute: boundedInt(
      'PRODGRAPH_VISION_MINTS_PER_MINUTE',
      env.PRODGRAPH_VISION_MINTS_PER_MINUTE,
      10,
      1,
      10_000,
    ),
  };
}

/** A named step of `backup` or `restore` to stop at, and at which time it is reached (1: the first). */
export interface PausePoint {
  step: string;
  nth: number;
}

/**
 * PRODGRAPH_TEST_PAUSE_AT=STEP[:N]: `backup` and `restore` stop for good the Nth time they reach
 * STEP, saying so on stderr, so a crash test can kill them at a known point (docs/operations.md
 * lists the steps). Read by those two commands only; unset, nothing stops.
 */
export function readPausePoint(env: NodeJS.ProcessEnv = process.env): PausePoint | null {
  const raw = env.PRODGRAPH_TEST_PAUSE_AT?.trim();
  if (!raw) return null;
  const m = /^([a-z][a-z-]*)(?::(\d{1,6}))?$/.exec(raw);
  if (!m || Number(m[2] ?? 1) < 1)
    throw new ConfigError(`PRODGRAPH_TEST_PAUSE_AT: "${raw}" is not STEP or STEP:N (N from 1)`);
  return { step: m[1]!, nth: Number(m[2] ?? 1) };
}
