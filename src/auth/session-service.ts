import { createHash, randomBytes } from 'node:crypto';
import type { SessionConfig } from '../config-sign-in.js';
import { databaseNow } from '../db/clock.js';
import type { Db } from '../db/index.js';
import { nowIso, parseJson } from '../db/values.js';
import type { ConsoleRole, Scope } from '../domain/vocabulary.js';
import { signInActor, type AuditActor } from './audit-actor.js';
import { recordAudit } from './audit-record.js';
import { mintKeyById } from './key-service.js';
import type { Principal } from './principal.js';
import * as repo from './session-repository.js';

/*
 * Console sessions: a signed-in browser holds a random token in an HttpOnly cookie; the
 * database holds its SHA-256, never the token, so a copy of the database signs nobody in. Each
 * session acts through an API key of its own that no token exists for (see migration 0016), so
 * every rule a key meets (scopes, surfaces, the clamp, idempotency, media tickets) it meets too,
 * and ending the session revokes that key: refused on the very next request, on every server.
 */

export const SESSION_COOKIE = 'prodgraph_session';

/**
 * What each console role may do, as the scopes the routes already check. A coordinator holds
 * `admin` for everything but credentials (keys, webhooks, sign-in, sessions): the route hook
 * refuses those routes to it (RouteAuth.credentials).
 */
export const ROLE_SCOPES: Record<ConsoleRole, readonly Scope[]> = {
  admin: ['read', 'write', 'read:money', 'admin'],
  coordinator: ['read', 'write', 'read:money', 'admin'],
  viewer: ['read'],
};

const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');
const MINUTE = 60_000;

export interface SessionStart {
  productionId: number;
  signInId: number;
  email: string;
  name: string;
  role: ConsoleRole;
  personId: number | null;
  address: string | null;
  /** The session cookie the browser came with, if any: ended, so a sign-in never keeps an old id. */
  previousToken?: string;
}

export interface StartedSession {
  id: number;
  /** Goes into the cookie only; never stored, never logged. */
  token: string;
}

/** Opens a session with a new random token, ending the one the browser came with. */
export async function startSession(
  db: Db,
  config: SessionConfig,
  input: SessionStart,
): Promise<StartedSession> {
  const token = randomBytes(32).toString('base64url');
  const id = await db.transaction().execute(async (trx) => {
    // the database's clock, not this host's: another server judges the session's expiry by it
    const now = await databaseNow(trx);
    const at = new Date(now).toISOString();
    if (input.previousToken) {
      const previous = await repo.findSessionByHash(trx, hashOf(input.previousToken));
      if (previous) await repo.endSessions(trx, [previous.id], at);
    }
    const label = `console sign-in (${input.role})`;
    const key = await mintKeyById(trx, {
      productionId: input.productionId,
      label,
      scopes: [...ROLE_SCOPES[input.role]],
      engagementId: null,
      personId: input.personId,
    });
    const id = await repo.insertSession(trx, {
      production_id: input.productionId,
      token_hash: hashOf(token),
      csrf_token: randomBytes(24).toString('base64url'),
      key_id: key.id,
      sign_in_id: input.signInId,
      email: input.email,
      name: input.name,
      role: input.role,
      address: input.address,
      created_at: at,
      last_seen_at: at,
      expires_at: new Date(
        Math.min(now + config.idleMinutes * MINUTE, now + config.maxHours * 60 * MINUTE),
      ).toISOString(),
      ends_at: new Date(now + config.maxHours * 60 * MINUTE).toISOString(),
    });
    const person = { id: input.personId, email: input.email, name: input.name };
    await recordAudit(trx, {
      productionId: input.productionId,
      actor: signInActor(person, input.role, { id: key.id, prefix: key.prefix, label }, input.address),
      action: 'session.sign_in',
      object: { type: 'session', id },
      summary: `signed in to the console as ${input.role}`,
    });
    return id;
  });
  return { id, token };
}

/**
 * The principal behind a session cookie's token, or null for an unknown, ended, idle-expired or
 * finished session. Its idle end slides forward with use, written at most once per half idle
 * period (not on every request).
 */
export async function authenticateSession(
  db: Db,
  config: SessionConfig,
  token: string,
): Promise<Principal | null> {
  if (token.length < 20 || token.length > 100) return null;
  const row = await repo.findSessionByHash(db, hashOf(token));
  if (!row || row.ended_at !== null || row.revoked_at !== null) return null;
  const now = Date.parse(row.db_now);
  const expires = Date.parse(row.expires_at);
  const ends = Date.parse(row.ends_at);
  if (now >= expires || now >= ends) return null;
  const idle = config.idleMinutes * MINUTE;
  if (expires - now < idle / 2) {
    const next = new Date(Math.min(now + idle, ends)).toISOString();
    await repo.slideSession(db, row.id, new Date(now).toISOString(), next);
  }
  const name = row.person_name ?? row.name;
  return {
    keyId: row.key_id,
    // the session's own key (no token exists for it): the audit trail names the person, and the prefix ties rows to the session
    keyPrefix: row.prefix,
    address: null,
    productionId: row.production_id,
    label: row.label,
    scopes: new Set(parseJson<Scope[]>(row.scopes, [])),
    engagementId: null,
    personId: row.person_id,
    personName: name,
    revision: row.revision,
    judgedAt: now,
    session: { id: row.id, role: row.role, csrfToken: row.csrf_token },
    person: { id: row.person_id, email: row.email, name },
  };
}

/** Ends the session behind a token (sign-out), recorded under `actor`; true when there was a live one. */
export async function endSessionByToken(db: Db, token: string, actor: AuditActor): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await repo.findSessionByHash(trx, hashOf(token));
    if (!row || (await repo.endSessions(trx, [row.id], nowIso())).length === 0) return false;
    await recordAudit(trx, {
      productionId: row.production_id,
      actor,
      action: 'session.sign_out',
      object: { type: 'session', id: row.id },
      summary: 'signed out of the console',
    });
    return true;
  });
}

export async function listSessions(db: Db, productionId: number) {
  return repo.liveSessions(db, productionId, new Date(await databaseNow(db)).toISOString());
}

/**
 * Ends one session of a production (an admin's revocation, recorded under `actor`); false when
 * there is no such live one.
 */
export async function revokeSession(
  db: Db,
  productionId: number,
  id: number,
  actor: AuditActor,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const session = await repo.openSession(trx, productionId, id);
    if (!session || (await repo.endSessions(trx, [id], nowIso())).length === 0) return false;
    await recordAudit(trx, {
      productionId,
      actor,
      action: 'session.revoke',
      object: { type: 'session', id },
      summary: `ended the console session of ${session.email} (${session.role})`,
    });
    return true;
  });
}

/** Ends every open session a sign-in row opened (its person's access was withdrawn or changed). */
export async function endSessionsOf(db: Db, productionId: number, signInId: number): Promise<number> {
  const open = await repo.openSessionIds(db, productionId, signInId);
  return (await repo.endSessions(db, open, nowIso())).length;
}
