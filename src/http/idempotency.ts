import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { compiledOnce } from '../db/driver/compiled.js';
import type { Db } from '../db/index.js';
import { nowIso } from '../db/values.js';
import type { Deferred, WriteHooks } from '../db/write-hooks.js';
import { errors } from '../errors.js';
import { principalOf } from '../auth/route-hook.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route accepts an `Idempotency-Key` header (write POSTs); see respondToWrite. */
    idempotent?: boolean;
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

const HEADER_DESCRIPTION =
  'Optional retry safety (additive in v1). A unique string per logical write, chosen by the ' +
  'client (a UUID is ideal). Repeating the request with the same key and the same body from ' +
  'the same API key within 24 hours returns the original status and body, with the header ' +
  '`Idempotent-Replayed: true`, and writes nothing again; reusing the key with a different body ' +
  'or on another route answers 422. Concurrent repeats wait for the first and then replay it. ' +
  'Only successful writes are remembered: a refused request (4xx) writes nothing, so it can be ' +
  'retried with the same key. For multipart uploads the body is the fields plus the SHA-256 of ' +
  'the file bytes.';

export const IdempotencyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: HEADER_DESCRIPTION }),
  ),
});

/** Thrown inside the write's transaction when the key was already used for this very request. */
class IdempotentReplay extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super('idempotent replay');
  }
}

/** Object keys sorted at every level, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are one request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What makes two requests "the same": route, path parameters and body. `body` defaults to the
 * parsed JSON body; multipart routes pass their fields and the file's SHA-256 instead.
 */
export function requestHashOf(request: FastifyRequest, body: unknown = request.body): string {
  return createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url ?? ''}\n`)
    .update(`${canonicalJson(request.params ?? {})}\n`)
    .update(canonicalJson(body ?? null))
    .digest('hex');
}

/** How often one API key's expired records are swept (each process keeps its own clock). */
const SWEEP_EVERY_MS = 60_000;
const lastSweep = new Map<number, number>();

/** Whether this API key's expired records are due a sweep; notes the sweep as done. */
function sweepDue(apiKeyId: number): boolean {
  const now = Date.now();
  if (now - (lastSweep.get(apiKeyId) ?? 0) < SWEEP_EVERY_MS) return false;
  // bounded: a process that has seen very many keys starts its clocks afresh
  if (lastSweep.size > 10_000) lastSweep.clear();
  lastSweep.set(apiKeyId, now);
  return true;
}

// Every keyed write runs these two; compiled once each (compiledOnce).
const claimOnce = compiledOnce(
  (db: Db, apiKeyId: number, key: string, requestHash: string, at: string) =>
    db
      .insertInto('idempotency_keys')
      .values({
        api_key_id: apiKeyId,
        key,
        request_hash: requestHash,
        status_code: sql<null>`null`,
        response_body: sql<null>`null`,
        created_at: at,
      })
      .onConflict((oc) => oc.columns(['api_key_id', 'key']).doNothing())
      .returning('id'),
  [1, 'key', 'hash', 'at'],
);

const rememberOnce = compiledOnce(
  (db: Db, status: number, body: string, id: number) =>
    db.updateTable('idempotency_keys').set({ status_code: status, response_body: body }).where('id', '=', id),
  [201, 'body', 2],
);

interface Remembered {
  id: number;
  status_code: number;
  response_body: string;
}

/**
 * The answers deferred to their group's end, by the group's transaction (and dropped with it): a
 * repeat of a keyed request later in the same group finds the first one's claim without its answer.
 */
const unwritten = new WeakMap<Db, Map<number, Remembered>>();

/** PostgreSQL: the answers of a group's keyed writes, recorded by one statement. */
async function rememberAll(trx: Db, rows: Remembered[]): Promise<void> {
  const [only] = rows;
  if (rows.length === 1 && only) {
    await rememberOnce(trx, only.status_code, only.response_body, only.id);
    return;
  }
  await sql`update idempotency_keys as k
    set status_code = r.status_code, response_body = r.response_body
    from json_populate_recordset(null::idempotency_keys, ${JSON.stringify(rows)}::json) as r
    where k.id = r.id`.execute(trx);
}

/** The bookkeeping of one keyed request, run inside the write's own transaction. */
function idempotencyHooks<T>(
  apiKeyId: number,
  key: string,
  requestHashOf: () => string,
  status: number,
  redact: (body: T) => unknown = (body) => body,
): WriteHooks<T> {
  let claimed: number | null = null;
  return {
    async begin(trx: Db) {
      claimed = null; // a write may run twice (its group run again after a rolled-back try)
      const requestHash = requestHashOf();
      // Records older than the window are forgotten, so an old key may be reused after 24 hours:
      // this key's own record is replaced below; the API key's other expired records are swept
      // now and then (sweeping them on every write would read all the key's records each time).
      const cutoff = new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString();
      if (sweepDue(apiKeyId)) {
        await trx
          .deleteFrom('idempotency_keys')
          .where('api_key_id', '=', apiKeyId)
          .where('created_at', '<', cutoff)
          .execute();
      }
      const claim = async () => (await claimOnce(trx, apiKeyId, key, requestHash, nowIso()))[0];
      // On PostgreSQL a concurrent repeat blocks here until the first commits or rolls back.
      let row = await claim();
      if (!row) {
        const gone = await trx
          .deleteFrom('idempotency_keys')
          .where('api_key_id', '=', apiKeyId)
          .where('key', '=', key)
          .where('created_at', '<', cutoff)
          .executeTakeFirst();
        if (Number(gone.numDeletedRows) > 0) row = await claim();
      }
      if (row) {
        claimed = row.id;
        return;
      }
      const stored = await trx
        .selectFrom('idempotency_keys')
        .where('api_key_id', '=', apiKeyId)
        .where('key', '=', key)
        .select(['id', 'request_hash', 'status_code', 'response_body'])
        .executeTakeFirstOrThrow();
      // claimed earlier in this very transaction (a repeat in the same group): its answer may
      // still wait for the group's end
      const pending = stored.status_code === null ? unwritten.get(trx)?.get(stored.id) : undefined;
      const seen = { ...stored, ...pending };
      if (seen.request_hash !== requestHash) {
        throw errors.invalid(
          'Idempotency-Key',
          'was already used for a different request in the last 24 hours; use a new key',
          'idempotency_key_reused',
        );
      }
      throw new IdempotentReplay(seen.status_code ?? status, JSON.parse(seen.response_body ?? 'null'));
    },
    async end(trx: Db, result: T, defer?: (statement: Deferred<Remembered>) => void) {
      if (claimed === null) return;
      const row = { id: claimed, status_code: status, response_body: JSON.stringify(redact(result)) };
      // in a group on PostgreSQL, the group's records are written by one statement at its end
      if (defer) {
        defer({ flush: rememberAll, row });
        const rows = unwritten.get(trx) ?? new Map<number, Remembered>();
        unwritten.set(trx, rows.set(row.id, row));
      } else await rememberOnce(trx, row.status_code, row.response_body, row.id);
    },
  };
}

export interface WriteResponse<T> {
  status: number;
  /** Response headers derived from the body (a replay derives them again from the stored body). */
  headers?: (body: T) => Record<string, string>;
  /** What is remembered for a replay, when the body holds something never to be stored (a token). */
  redact?: (body: T) => T;
}

/**
 * Runs a write route's service call with retry safety when the request carries an
 * `Idempotency-Key`, and answers with the write's status and headers (or the replayed ones).
 */
export async function respondToWrite<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  response: WriteResponse<T>,
  write: (hooks: WriteHooks<T> | undefined) => Promise<T>,
  /** Defaults to the JSON body's; a function when the body is known only once the write has read it. */
  requestHash?: string | (() => string),
): Promise<T> {
  const key = request.headers[IDEMPOTENCY_HEADER];
  const hooks =
    typeof key === 'string' && request.routeOptions.config.idempotent
      ? idempotencyHooks<T>(
          principalOf(request).keyId,
          key,
          typeof requestHash === 'function' ? requestHash : () => requestHash ?? requestHashOf(request),
          response.status,
          response.redact,
        )
      : undefined;
  try {
    const result = await write(hooks);
    reply.code(response.status).headers(response.headers?.(result) ?? {});
    return result;
  } catch (err) {
    if (!(err instanceof IdempotentReplay)) throw err;
    const body = err.body as T;
    reply.code(err.status).headers({ ...(response.headers?.(body) ?? {}), 'idempotent-replayed': 'true' });
    return body;
  }
}
