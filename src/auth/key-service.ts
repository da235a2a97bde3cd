import { LRUCache } from 'lru-cache';
import type { Db } from '../db/index.js';
import { nowIso, parseJson } from '../db/values.js';
import { errors, UserError } from '../errors.js';
import type { AuditActor } from './audit-actor.js';
import { recordAudit } from './audit-record.js';
import type { Principal } from './principal.js';
import { SCOPES, type Scope } from '../domain/vocabulary.js';
import * as repo from './key-repository.js';
import { hashMatches, newToken, prefixOf, shapeOf } from './key-tokens.js';

/** A key's scopes or expiry refused, in the words of the flag or field that set them. */
export class KeyError extends UserError {}

export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'write'];
/** An engagement-bound key reaches only the round-trip surface, where `write` buys nothing. */
export const DEFAULT_VENDOR_SCOPES: readonly Scope[] = ['read'];

/** The scopes named in a comma-separated list; undefined when none are named (the defaults apply). */
export function parseScopes(raw: string | undefined): Scope[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const scopes = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw new KeyError(`unknown scope "${s}" (scopes: ${SCOPES.join(', ')})`);
    }
  }
  return [...new Set(scopes)] as Scope[];
}

export interface MintInput {
  production: string;
  label: string;
  scopes?: Scope[];
  engagement?: string;
  person?: string;
  /** When the key stops working; undefined: never (or the vendor default, below). */
  expiresAt?: string | null;
  /** Days an engagement-bound key lives when no expiry is given (PRODGRAPH_VENDOR_KEY_DAYS). */
  vendorKeyDays?: number | null;
}

export interface MintedKey {
  id: number;
  token: string;
  prefix: string;
  scopes: Scope[];
  engagement: string | null;
  expires_at: string | null;
}

const DAY_MS = 86_400_000;
const DURATION = /^(\d{1,5})([hdw])$/;
const UNIT_MS = { h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS } as const;

/** Milliseconds of a duration as the CLI takes it (`12h`, `30d`, `8w`); null for anything else. */
export function durationMs(raw: string): number | null {
  const d = DURATION.exec(raw.trim());
  return d ? Number(d[1]) * UNIT_MS[d[2] as keyof typeof UNIT_MS] : null;
}

/**
 * A key's expiry as the CLI takes it: a duration from now (`12h`, `30d`, `8w`) or a date or
 * date-time (`2027-03-31`, midnight UTC; `2027-03-31T18:00:00Z`). Answers the UTC ISO instant.
 */
export function parseExpiry(raw: string, now = Date.now()): string {
  const text = raw.trim();
  const d = durationMs(text);
  const t = d !== null ? now + d : Date.parse(text);
  if (!Number.isFinite(t) || (d === null && !/^\d{4}-\d{2}-\d{2}/.test(text)))
    throw new KeyError(`--expires: "${raw}" is neither a date (2027-03-31) nor a duration (30d, 12h, 8w)`);
  return new Date(t).toISOString();
}

/** The expiry a new key gets: the one asked for (null: none), else the vendor default for a vendor key. */
function expiryOf(input: MintById, now: number): string | null {
  if (input.expiresAt === null) return null;
  if (input.expiresAt === undefined) {
    const days = input.engagementId !== null ? input.vendorKeyDays : null;
    return days ? new Date(now + days * DAY_MS).toISOString() : null;
  }
  const t = Date.parse(input.expiresAt);
  if (!Number.isFinite(t)) throw new KeyError('expires_at must be a valid date-time');
  if (t <= now) throw new KeyError('expires_at must be in the future');
  return new Date(t).toISOString();
}

async function productionIdOf(db: Db, code: string): Promise<number> {
  const row = await db.selectFrom('productions').where('code', '=', code).select('id').executeTakeFirst();
  if (!row) throw new KeyError(`no production with code "${code}"`);
  return row.id;
}

/**
 * Mints a key; the token exists only in the return value, never in the database. With `audit`
 * (the CLI's operator) the key and its audit row are one transaction.
 */
export async function mintKey(db: Db, input: MintInput, audit?: AuditActor): Promise<MintedKey> {
  if (audit) return db.transaction().execute((trx) => mintKeyAudited(trx, input, audit));
  return mintKeyUnaudited(db, input);
}

async function mintKeyAudited(trx: Db, input: MintInput, actor: AuditActor): Promise<MintedKey> {
  const key = await mintKeyUnaudited(trx, input);
  const row = await trx
    .selectFrom('api_keys')
    .where('id', '=', key.id)
    .select(['production_id', 'engagement_id'])
    .executeTakeFirstOrThrow();
  await recordAudit(trx, {
    productionId: row.production_id,
    actor,
    action: 'key.mint',
    object: { type: 'key', id: key.id },
    engagementId: row.engagement_id,
    summary: `key ${key.prefix} "${input.label.trim()}" (${key.scopes.join(', ')})${key.expires_at ? `, expires ${key.expires_at}` : ''}`,
  });
  return key;
}

async function mintKeyUnaudited(db: Db, input: MintInput): Promise<MintedKey> {
  const label = input.label.trim();
  if (label === '') throw new KeyError('a key needs a non-empty --label');
  const productionId = await productionIdOf(db, input.production);
  let engagementId: number | null = null;
  if (input.engagement) {
    const e = await db
      .selectFrom('engagements')
      .where('production_id', '=', productionId)
      .where('ref', '=', input.engagement)
      .select(['id', 'retired_at'])
      .executeTakeFirst();
    if (!e) throw new KeyError(`no engagement "${input.engagement}" in production "${input.production}"`);
    if (e.retired_at !== null) throw new KeyError(`engagement "${input.engagement}" is archived`);
    engagementId = e.id;
  }
  let personId: number | null = null;
  if (input.person) {
    const p = await db
      .selectFrom('people')
      .where('production_id', '=', productionId)
      .where('ref', '=', input.person)
      .select('id')
      .executeTakeFirst();
    if (!p) throw new KeyError(`no person "${input.person}" in production "${input.production}"`);
    personId = p.id;
  }
  const key = await mintKeyById(db, {
    productionId,
    label,
    scopes: input.scopes,
    engagementId,
    personId,
    expiresAt: input.expiresAt,
    vendorKeyDays: input.vendorKeyDays,
  });
  return { ...key, engagement: input.engagement ?? null };
}

export interface MintById {
  productionId: number;
  label: string;
  scopes?: Scope[];
  engagementId: number | null;
  personId: number | null;
  expiresAt?: string | null;
  vendorKeyDays?: number | null;
}

/**
 * The one place a key is made (CLI and admin API): a vendor key defaults to `read`, never holds
 * `admin`; the token exists only in the return value, never in the database.
 */
export async function mintKeyById(db: Db, input: MintById): Promise<Omit<MintedKey, 'engagement'>> {
  const scopes = input.scopes ?? [...(input.engagementId === null ? DEFAULT_SCOPES : DEFAULT_VENDOR_SCOPES)];
  for (const operatorOnly of ['admin', 'metrics'] as const) {
    if (input.engagementId !== null && scopes.includes(operatorOnly)) {
      throw new KeyError(`an engagement-bound key cannot hold the "${operatorOnly}" scope`);
    }
  }
  const now = Date.now();
  const expiresAt = expiryOf(input, now);
  const { token, prefix, hash } = newToken();
  const id = await repo.insertKey(db, {
    production_id: input.productionId,
    prefix,
    hash,
    label: input.label,
    scopes: JSON.stringify(scopes),
    engagement_id: input.engagementId,
    person_id: input.personId,
    created_at: new Date(now).toISOString(),
    expires_at: expiresAt,
  });
  return { id, token, prefix, scopes, expires_at: expiresAt };
}

export async function listKeys(db: Db, productionCode: string) {
  const rows = await repo.listKeys(db, await productionIdOf(db, productionCode));
  return rows.map((r) => ({
    id: r.id,
    prefix: r.prefix,
    label: r.label,
    scopes: parseJson<Scope[]>(r.scopes, []),
    engagement: r.engagement ?? null,
    person: r.person ?? null,
    created_at: r.created_at,
    last_used_at: r.last_used_at,
    revoked_at: r.revoked_at,
    expires_at: r.expires_at,
  }));
}

/**
 * Revokes by numeric id, by prefix, or by the whole token; effective on the very next request.
 * With `audit` (the CLI's operator) the revocation and its audit row are one transaction; the
 * row names the key by prefix, never by the token it may have been given.
 */
export async function revokeKey(
  db: Db,
  idOrPrefix: string,
  audit?: AuditActor,
): Promise<{ id: number; prefix: string }> {
  return db.transaction().execute(async (trx) => {
    const query = trx
      .selectFrom('api_keys')
      .select(['id', 'prefix', 'label', 'production_id', 'engagement_id']);
    const row = /^\d+$/.test(idOrPrefix)
      ? await query.where('id', '=', Number(idOrPrefix)).executeTakeFirst()
      : await query.where('prefix', '=', prefixOf(idOrPrefix) ?? idOrPrefix).executeTakeFirst();
    if (!row) throw new KeyError(`no key "${idOrPrefix}"`);
    await repo.revokeKey(trx, row.id, nowIso());
    if (audit)
      await recordAudit(trx, {
        productionId: row.production_id,
        actor: audit,
        action: 'key.revoke',
        object: { type: 'key', id: row.id },
        engagementId: row.engagement_id,
        summary: `key ${row.prefix} "${row.label}"`,
      });
    return { id: row.id, prefix: row.prefix };
  });
}

/**
 * Prefixes of the keys a database held when this process first met a legacy-shaped token (one
 * query per process): keys are never minted legacy any more, so the set can only over-cover,
 * and a legacy-shaped string whose prefix is not in it is refused without a lookup.
 */
const legacyPrefixes = new WeakMap<Db, Promise<Set<string>>>();

function knownPrefixes(db: Db): Promise<Set<string>> {
  let known = legacyPrefixes.get(db);
  if (!known) {
    known = repo.livePrefixes(db).then((rows) => new Set(rows));
    // a failed load must not stick: the next legacy token tries again
    known.catch(() => legacyPrefixes.delete(db));
    legacyPrefixes.set(db, known);
  }
  return known;
}

/**
 * Tokens this process has already hashed and found matching, with the stored hash they matched:
 * a token whose key row (read on every request, so a revocation counts at once) still holds
 * that hash needs no SHA-256 again. Holds only tokens that matched a key, so it is bounded by
 * the keys in use, and by `max` whatever happens.
 */
const verified = new LRUCache<string, string>({ max: 10_000 });

/** The scope set of a key's stored list, parsed once per distinct list (there are few). */
const scopeSets = new LRUCache<string, ReadonlySet<Scope>>({ max: 256 });

function scopesOf(stored: string): ReadonlySet<Scope> {
  let scopes = scopeSets.get(stored);
  if (!scopes) {
    scopes = new Set(parseJson<Scope[]>(stored, []));
    scopeSets.set(stored, scopes);
  }
  return scopes;
}

function tokenMatches(token: string, storedHash: string): boolean {
  if (verified.get(token) === storedHash) return true;
  if (!hashMatches(token, storedHash)) return false;
  verified.set(token, storedHash);
  return true;
}

/**
 * The principal behind a bearer token, or null for an unknown, malformed or revoked key; a key
 * past its expiry throws `key_expired` (only once the token matched, so a guessed prefix learns
 * nothing). A string that cannot be one of our tokens (its checksum fails) costs no query; every
 * other reads its key row (expiry included), so a key revoked by any process, or expired, is
 * refused on the very next request: nothing kept in memory outlives either.
 */
export async function authenticate(db: Db, token: string): Promise<Principal | null> {
  const shape = shapeOf(token);
  if (!shape) return null;
  if (shape.kind === 'legacy' && !(await knownPrefixes(db)).has(shape.prefix)) return null;
  const row = await repo.findKeyByPrefix(db, shape.prefix);
  if (!row || row.revoked_at !== null || !tokenMatches(token, row.hash)) return null;
  const judgedAt = Date.parse(row.db_now);
  if (row.expires_at !== null && Date.parse(row.expires_at) <= judgedAt)
    throw errors.keyExpired(row.expires_at);
  return {
    keyId: row.id,
    keyPrefix: shape.prefix,
    productionId: row.production_id,
    label: row.label,
    scopes: scopesOf(row.scopes),
    engagementId: row.engagement_id,
    personId: row.person_id,
    personName: row.person_name ?? null,
    revision: row.revision,
    judgedAt,
    address: null,
  };
}

/**
 * Keeps `last_used_at` roughly right (to the minute) without a write on every request:
 * a key's use is written at most once per interval.
 */
export class KeyUsage {
  private readonly written = new Map<number, number>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly intervalMs = 60_000,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  used(keyId: number): void {
    const now = Date.now();
    const last = this.written.get(keyId) ?? 0;
    if (now - last < this.intervalMs) return;
    this.written.set(keyId, now);
    const write = repo
      .touchKeys(this.db, [keyId], new Date(now).toISOString())
      .catch(this.onError)
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
