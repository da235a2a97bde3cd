import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { NetworkConfigError, parseCidrList, parseTrustProxy, type Cidr } from './config-network.js';
import { parseSignIn, SignInConfigError, type SignInConfig } from './config-sign-in.js';
import { UserError } from './errors.js';

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
  /** Bytes of assembled answers kept in memory (AnswerCache); 0 keeps none. */
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
   * Server processes `serve` runs (the cluster's workers): every core by default on PostgreSQL, one on
   * SQLite, where reads scale with workers but every write still waits for the one writer.
   */
  workers: number;
  /** Days an engagement-bound (vendor) key lives when minted without an expiry; null: no default (PRODGRAPH_VENDOR_KEY_DAYS). */
  vendorKeyDays: number | null;
  /** Days audit rows are kept before the server prunes them (PRODGRAPH_AUDIT_RETENTION_DAYS, default 400). */
  auditRetentionDays: number;
  /** Console sign-in with the studio's identity provider, and the sessions it opens (parseSignIn). */
  signIn: SignInConfig;
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

/** How webhook deliveries are made (WebhookWorker). */
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
  /** Most memory one image decode may take (media proxies, look briefs), bytes (overBudget, DecodeGate). */
  decodeBytes: number;
}

export class ConfigError extends UserError {}

export const DEFAULT_DB = './data/prodgraph.db';
export const DEFAULT_MEDIA = './data/media';

/** Most server processes `serve` starts, whatever the machine. */
export const MAX_WORKERS = 64;

/** Model identifiers of the two demo generation models (image and video). */
export const DEFAULT_VISION_MODELS = ['image-standard', 'video-standard'] as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MiB = 1024 * 1024;

/**
 * What a refusal calls a variable (`label`, when a flag sets it too) and, where the range alone
 * would not say enough, what the value should have been (`refusal`).
 */
interface Wording {
  label?: string;
  refusal?: string;
}

/** A whole number from `minimum` to `maximum`, written as digits only (no sign, no exponent). */
const whole = (
  minimum: number,
  maximum: number,
  fallback: number | undefined,
  description: string,
  wording?: Wording,
) =>
  Type.Integer({
    minimum,
    maximum,
    description,
    ...(fallback === undefined ? {} : { default: fallback }),
    ...wording,
  });

const text = (
  description: string,
  options: Wording & { default?: string; pattern?: string; minLength?: number } = {},
) => Type.String({ description, ...options });

const maybe = <T extends TSchema>(schema: T) => Type.Optional(schema);
const ANY = Number.MAX_SAFE_INTEGER;

/**
 * Every environment variable the service reads, each once: its type, default and limits. The
 * README's configuration table lists exactly these (test/config-readme.test.ts). A value left
 * empty counts as unset, except where the variable's pattern or length judges it.
 */
export const ENVIRONMENT = Type.Object({
  PRODGRAPH_DB: text('a SQLite path (optionally sqlite:PATH) or a postgres:// URL (--db)', {
    default: DEFAULT_DB,
    pattern: '\\S',
    label: 'database',
    refusal: 'empty --db / PRODGRAPH_DB',
  }),
  PRODGRAPH_MEDIA: text('where media files are stored (--media)', { default: DEFAULT_MEDIA }),
  HOST: text('listen address (--host)', {
    default: '127.0.0.1',
    pattern: '\\S',
    label: 'host',
    refusal: 'empty',
  }),
  PORT: whole(1, 65535, 8080, 'listen port (--port)', { label: 'port' }),
  PRODGRAPH_WORKERS: maybe(
    Type.Union([Type.Literal('auto'), whole(1, MAX_WORKERS, undefined, 'server processes')], {
      label: 'workers (--workers / PRODGRAPH_WORKERS)',
      description:
        'server processes sharing the port (--workers); unset: every core on PostgreSQL, 1 on SQLite',
    }),
  ),
  PRODGRAPH_TICKET_SECRET: maybe(text('secret that signs media tickets', { minLength: 32 })),
  PRODGRAPH_MAX_UPLOAD_BYTES: whole(1, ANY, 512 * MiB, 'largest single uploaded file, bytes'),
  PRODGRAPH_MAX_SUBMISSION_FILES: whole(1, ANY, 50, 'most files in one submission or package upload'),
  PRODGRAPH_MAX_EVENT_BATCH: whole(1, ANY, 10_000, 'most events in one storage batch'),
  PRODGRAPH_MAX_MCP_BODY_BYTES: whole(1, ANY, 32 * MiB, 'largest POST /mcp body, bytes'),
  PRODGRAPH_MAX_DECODE_MB: whole(1, 16_384, 128, 'most memory one image decode may take'),
  PRODGRAPH_WEBHOOK_ALLOW: maybe(text('private address ranges webhooks may reach')),
  PRODGRAPH_TRUST_PROXY: maybe(text('proxies whose X-Forwarded-For names the client')),
  PRODGRAPH_LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((level) => Type.Literal(level)),
    { default: 'info', description: 'log level (LOG_LEVEL when unset)' },
  ),
  PRODGRAPH_ANSWER_CACHE_MB: whole(0, 99_999, 64, 'memory for assembled answers; 0 keeps none', {
    refusal: 'is not a whole number of megabytes (0 turns the cache off)',
  }),
  PRODGRAPH_FEED_MAX_WAIT_SECONDS: whole(0, 300, 30, 'the longest a long-poll is held; 0: no long-polling', {
    refusal: 'is not a whole number of seconds from 0 to 300',
  }),
  // a delivery may outlast a lease: WebhookWorker's heartbeat renews the lease while it waits
  PRODGRAPH_WEBHOOK_TIMEOUT_MS: whole(100, 30_000, 10_000, 'how long one webhook delivery may take'),
  PRODGRAPH_WEBHOOK_RETRY_BASE_MS: whole(10, 3_600_000, 1000, "the first retry's delay"),
  PRODGRAPH_WEBHOOK_RETRY_MAX_MS: whole(10, 86_400_000, 3_600_000, 'the longest delay between retries'),
  PRODGRAPH_VISION_TOKEN_URL: maybe(text("the generation provider's token endpoint")),
  PRODGRAPH_VISION_CREDENTIAL: maybe(text('the provider credential')),
  PRODGRAPH_VISION_CREDENTIAL_FILE: maybe(text('a file holding the provider credential')),
  PRODGRAPH_VISION_PROVIDER: maybe(text("provider name shown to clients; unset: the token URL's host")),
  PRODGRAPH_VISION_MODELS: text('the two models a client token may be limited to', {
    default: DEFAULT_VISION_MODELS.join(','),
  }),
  PRODGRAPH_VISION_TOKEN_TTL: whole(10, 3600, 300, 'client-token lifetime, seconds'),
  PRODGRAPH_VISION_TIMEOUT_MS: whole(100, 60_000, 5000, 'how long to wait for the provider'),
  PRODGRAPH_VISION_MINTS_PER_MINUTE: whole(1, 10_000, 10, 'session tokens one key may mint a minute'),
  PRODGRAPH_RATE_LIMIT: Type.Union([Type.Literal('off'), whole(1, 1_000_000, undefined, 'requests')], {
    default: 1200,
    description: 'requests one key may make per window; off disables',
  }),
  PRODGRAPH_RATE_LIMIT_WINDOW_MS: whole(1000, 3_600_000, 60_000, 'the rate-limit window'),
  PRODGRAPH_CORS_ORIGINS: maybe(text('exact browser origins allowed to call the API, comma-separated')),
  PRODGRAPH_HEADERS_TIMEOUT_MS: whole(100, 600_000, 30_000, "a request's headers"),
  PRODGRAPH_REQUEST_TIMEOUT_MS: whole(100, 86_400_000, 3_600_000, 'a whole request'),
  PRODGRAPH_IDLE_TIMEOUT_MS: whole(100, 3_600_000, 60_000, 'a connection with no traffic'),
  PRODGRAPH_KEEP_ALIVE_TIMEOUT_MS: whole(100, 600_000, 5000, 'an idle keep-alive connection'),
  PRODGRAPH_SHUTDOWN_TIMEOUT_MS: whole(100, 600_000, 30_000, 'requests in flight at SIGTERM'),
  // 5 s by default: time for a balancer's health checks to notice
  PRODGRAPH_DRAIN_MS: whole(0, 600_000, 5000, 'SIGTERM serves on, /healthz 503 (--drain-ms)', {
    label: 'drain (--drain-ms / PRODGRAPH_DRAIN_MS)',
    refusal: 'is not a whole number of milliseconds from 0 to 600000',
  }),
  PRODGRAPH_CHANGE_POLL_MS: whole(10, 3_600_000, 250, "long-polls look for others' commits"),
  PRODGRAPH_METRICS_PORT: maybe(whole(1, 65535, undefined, 'a listener serving only GET /metrics')),
  PRODGRAPH_METRICS_HOST: text('the address of that listener', { default: '127.0.0.1' }),
  PRODGRAPH_DB_CONNECT_TIMEOUT_MS: whole(100, 120_000, 5000, 'PostgreSQL: the wait for a connection'),
  PRODGRAPH_VENDOR_KEY_DAYS: maybe(whole(1, 36_500, undefined, 'days a vendor key lives by default')),
  PRODGRAPH_AUDIT_RETENTION_DAYS: whole(1, 36_500, 400, 'days the audit trail keeps a row'),
  PRODGRAPH_PUBLIC_URL: maybe(text('the address browsers reach the service at')),
  PRODGRAPH_OIDC_ISSUER: maybe(text("the identity provider's issuer URL")),
  PRODGRAPH_OIDC_CLIENT_ID: maybe(text('the client registered with the provider')),
  PRODGRAPH_OIDC_CLIENT_SECRET: maybe(text("that client's secret")),
  PRODGRAPH_OIDC_ALLOWED_DOMAINS: maybe(text('email domains allowed to sign in, comma-separated')),
  PRODGRAPH_OIDC_REQUIRED_GROUPS: maybe(text('groups one of which a person must be in, comma-separated')),
  PRODGRAPH_OIDC_GROUPS_CLAIM: text('the claim holding the groups', { default: 'groups' }),
  PRODGRAPH_SESSION_IDLE_MINUTES: whole(1, 24 * 60, 30, 'a console session unused this long ends'),
  PRODGRAPH_SESSION_MAX_HOURS: whole(1, 24 * 30, 12, 'a console session ends this long after sign-in'),
});

/** The environment once parsed: numbers are numbers, defaults are filled in. */
export type Environment = Static<typeof ENVIRONMENT>;

type Variable = keyof Environment;
/** What parsing and refusals read of one variable's schema. */
interface VariableSchema extends Wording {
  type?: string;
  const?: string;
  anyOf?: VariableSchema[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  minLength?: number;
}

/** The schema of one variable, and the integer it may hold (itself, or a union's integer branch). */
function variable(name: Variable) {
  const schema = ENVIRONMENT.properties[name] as unknown as VariableSchema;
  const branches = schema.anyOf ?? [schema];
  return {
    schema,
    label: schema.label ?? name,
    integer: branches.find((b) => b.type === 'integer'),
    literals: branches.flatMap((b) => (b.const === undefined ? [] : [b.const])),
  };
}

/**
 * Reads `env` against ENVIRONMENT: a whole number from its digits, an empty value as unset,
 * the defaults filled in, then every limit checked. The first value refused stops everything
 * with one line naming the variable and why. `given` is what was set, before the defaults.
 */
export function parseEnvironment(env: NodeJS.ProcessEnv): {
  values: Environment;
  given: Partial<Environment>;
} {
  const given: Record<string, unknown> = {};
  for (const name of Object.keys(ENVIRONMENT.properties) as Variable[]) {
    const raw = env[name];
    if (raw === undefined) continue;
    const { schema, label, integer, literals } = variable(name);
    const judged = schema.pattern !== undefined || schema.minLength !== undefined;
    if (raw.trim() === '' && !judged) continue;
    if (integer === undefined || literals.includes(raw.trim())) {
      given[name] = integer === undefined ? raw : raw.trim();
    } else if (/^\d+$/.test(raw.trim())) {
      given[name] = Number(raw);
    } else {
      throw new ConfigError(`${label}: "${raw}" ${schema.refusal ?? 'is not a whole number'}`);
    }
  }
  const values = Value.Default(ENVIRONMENT, { ...given }) as Environment;
  const [error] = Value.Errors(ENVIRONMENT, values);
  if (error !== undefined) {
    const name = error.instancePath.split('/')[1] as Variable;
    throw new ConfigError(refusal(name, values[name], env[name], error.message));
  }
  return { values, given };
}

/** Why `value` of `name` is refused, in the words of its schema. */
function refusal(name: Variable, value: unknown, raw: string | undefined, why: string): string {
  const { schema, label, integer, literals } = variable(name);
  if (integer !== undefined && typeof value === 'number') {
    if (schema.refusal) return `${label}: "${raw}" ${schema.refusal}`;
    return `${label}: ${value} is out of range (${integer.minimum}..${integer.maximum})`;
  }
  if (literals.length > 0) return `${label}: "${String(value)}" is not one of ${literals.join(', ')}`;
  if (schema.refusal) return `${label}: ${schema.refusal}`;
  if (schema.minLength !== undefined) return `${label}: must be at least ${schema.minLength} characters`;
  return `${label}: ${why}`;
}

export interface ConfigInput {
  db?: string;
  media?: string;
  host?: string;
  port?: string;
  workers?: string;
  drainMs?: string;
}

/** Flags win over the environment; the environment wins over defaults. */
export function loadConfig(flags: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const { values: e, given } = parseEnvironment({
    ...env,
    PRODGRAPH_LOG_LEVEL: env.PRODGRAPH_LOG_LEVEL ?? env.LOG_LEVEL,
    PRODGRAPH_DB: flags.db ?? env.PRODGRAPH_DB,
    PRODGRAPH_MEDIA: flags.media ?? env.PRODGRAPH_MEDIA,
    HOST: flags.host ?? env.HOST,
    PORT: flags.port ?? env.PORT,
    PRODGRAPH_WORKERS: flags.workers ?? env.PRODGRAPH_WORKERS,
    PRODGRAPH_DRAIN_MS: flags.drainMs ?? env.PRODGRAPH_DRAIN_MS,
  });
  const db = parseDbTarget(e.PRODGRAPH_DB);
  if (e.PRODGRAPH_WEBHOOK_RETRY_MAX_MS < e.PRODGRAPH_WEBHOOK_RETRY_BASE_MS) {
    throw new ConfigError(
      'PRODGRAPH_WEBHOOK_RETRY_MAX_MS: must not be below PRODGRAPH_WEBHOOK_RETRY_BASE_MS',
    );
  }
  if (given.PRODGRAPH_METRICS_HOST !== undefined && e.PRODGRAPH_METRICS_PORT === undefined) {
    throw new ConfigError('PRODGRAPH_METRICS_HOST: set PRODGRAPH_METRICS_PORT as well');
  }
  return {
    db,
    mediaDir: resolve(e.PRODGRAPH_MEDIA),
    host: e.HOST,
    port: e.PORT,
    ticketSecret: e.PRODGRAPH_TICKET_SECRET ?? null,
    logLevel: e.PRODGRAPH_LOG_LEVEL,
    limits: {
      uploadBytes: e.PRODGRAPH_MAX_UPLOAD_BYTES,
      submissionFiles: e.PRODGRAPH_MAX_SUBMISSION_FILES,
      eventBatch: e.PRODGRAPH_MAX_EVENT_BATCH,
      mcpBodyBytes: e.PRODGRAPH_MAX_MCP_BODY_BYTES,
      decodeBytes: e.PRODGRAPH_MAX_DECODE_MB * MiB,
    },
    vision: visionConfig(e),
    corsOrigins: parseOrigins(e.PRODGRAPH_CORS_ORIGINS),
    rateLimit: {
      max: e.PRODGRAPH_RATE_LIMIT === 'off' ? null : e.PRODGRAPH_RATE_LIMIT,
      windowMs: e.PRODGRAPH_RATE_LIMIT_WINDOW_MS,
    },
    timeouts: {
      drainMs: e.PRODGRAPH_DRAIN_MS,
      headersMs: e.PRODGRAPH_HEADERS_TIMEOUT_MS,
      requestMs: e.PRODGRAPH_REQUEST_TIMEOUT_MS,
      idleMs: e.PRODGRAPH_IDLE_TIMEOUT_MS,
      keepAliveMs: e.PRODGRAPH_KEEP_ALIVE_TIMEOUT_MS,
      shutdownMs: e.PRODGRAPH_SHUTDOWN_TIMEOUT_MS,
    },
    answerCacheBytes: e.PRODGRAPH_ANSWER_CACHE_MB * MiB,
    webhooks: {
      timeoutMs: e.PRODGRAPH_WEBHOOK_TIMEOUT_MS,
      retryBaseMs: e.PRODGRAPH_WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: e.PRODGRAPH_WEBHOOK_RETRY_MAX_MS,
      allow: refusedAs(() => parseCidrList('PRODGRAPH_WEBHOOK_ALLOW', e.PRODGRAPH_WEBHOOK_ALLOW).ranges),
    },
    feedMaxWaitSeconds: e.PRODGRAPH_FEED_MAX_WAIT_SECONDS,
    changePollMs: e.PRODGRAPH_CHANGE_POLL_MS,
    trustProxy: refusedAs(() => parseTrustProxy(e.PRODGRAPH_TRUST_PROXY)),
    metricsListener:
      e.PRODGRAPH_METRICS_PORT === undefined
        ? null
        : { host: e.PRODGRAPH_METRICS_HOST.trim(), port: e.PRODGRAPH_METRICS_PORT },
    workers: workerCount(e.PRODGRAPH_WORKERS, db),
    vendorKeyDays: e.PRODGRAPH_VENDOR_KEY_DAYS ?? null,
    auditRetentionDays: e.PRODGRAPH_AUDIT_RETENTION_DAYS,
    signIn: refusedAs(() => parseSignIn(e)),
    dbConnectTimeoutMs: e.PRODGRAPH_DB_CONNECT_TIMEOUT_MS,
  };
}

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

/** `auto`: one per core; unset: every core on PostgreSQL, one on SQLite. */
function workerCount(workers: Environment['PRODGRAPH_WORKERS'], db: DbTarget): number {
  const cores = Math.min(availableParallelism(), MAX_WORKERS);
  if (workers === 'auto') return cores;
  return workers ?? (db.dialect === 'postgres' ? cores : 1);
}

/** The sign-in and network settings' refusals, as every other setting's. */
function refusedAs<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof SignInConfigError || err instanceof NetworkConfigError)
      throw new ConfigError(err.message);
    throw err;
  }
}

/** `https://a.example,https://b.example`: exact origins only, no wildcard (credentials travel in a header). */
function parseOrigins(raw: string | undefined): string[] {
  if (raw === undefined) return [];
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

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;
// visible ASCII only: the credential goes into a header, and a header error would quote it
const CREDENTIAL = /^[\x21-\x7e]{1,4096}$/;

function readCredential(e: Environment): string | undefined {
  const inline = e.PRODGRAPH_VISION_CREDENTIAL;
  const file = e.PRODGRAPH_VISION_CREDENTIAL_FILE;
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError('PRODGRAPH_VISION_CREDENTIAL and PRODGRAPH_VISION_CREDENTIAL_FILE: set only one');
  }
  let value = inline;
  if (file !== undefined) {
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

function parseModels(raw: string): readonly [string, string] {
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

function visionConfig(e: Environment): VisionConfig {
  const rawUrl = e.PRODGRAPH_VISION_TOKEN_URL?.trim();
  const credential = readCredential(e);
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
    const name = e.PRODGRAPH_VISION_PROVIDER?.trim() || tokenUrl.hostname;
    if (name.length > 100 || /\p{Cc}/u.test(name)) {
      throw new ConfigError('PRODGRAPH_VISION_PROVIDER: at most 100 characters, no control characters');
    }
    provider = { name, tokenUrl, credential: new Secret(credential) };
  }
  return {
    provider,
    models: parseModels(e.PRODGRAPH_VISION_MODELS),
    tokenLifetimeSeconds: e.PRODGRAPH_VISION_TOKEN_TTL,
    timeoutMs: e.PRODGRAPH_VISION_TIMEOUT_MS,
    mintsPerMinute: e.PRODGRAPH_VISION_MINTS_PER_MINUTE,
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
