import { resolve } from 'node:path';

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
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

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
    limits: {
      uploadBytes: positiveInt(
        'PRODGRAPH_MAX_UPLOAD_BYTES',
        env.PRODGRAPH_MAX_UPLOAD_BYTES,
        512 * 1024 * 1024,
      ),
      submissionFiles: positiveInt('PRODGRAPH_MAX_SUBMISSION_FILES', env.PRODGRAPH_MAX_SUBMISSION_FILES, 50),
      eventBatch: positiveInt('PRODGRAPH_MAX_EVENT_BATCH', env.PRODGRAPH_MAX_EVENT_BATCH, 10_000),
      mcpBodyBytes: positiveInt(
        'PRODGRAPH_MAX_MCP_BODY_BYTES',
        env.PRODGRAPH_MAX_MCP_BODY_BYTES,
        32 * 1024 * 1024,
      ),
    },
  };
}
