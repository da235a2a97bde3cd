import { dbClock } from '../db/clock.js';
import type { Db } from '../db/index.js';
import type { ConsoleRole } from '../domain/vocabulary.js';

/**
 * A session by the SHA-256 of its cookie's token, with its key, its production's revision, its
 * person, and the database's clock (`db_now`), which every server judges its expiry by.
 */
export function findSessionByHash(db: Db, tokenHash: string) {
  return db
    .selectFrom('console_sessions as s')
    .innerJoin('api_keys as k', 'k.id', 's.key_id')
    .innerJoin('productions as p', 'p.id', 's.production_id')
    .leftJoin('people', 'people.id', 'k.person_id')
    .where('s.token_hash', '=', tokenHash)
    .select([
      's.id',
      's.production_id',
      's.csrf_token',
      's.key_id',
      's.email',
      's.name',
      's.role',
      's.expires_at',
      's.ends_at',
      's.ended_at',
      'k.label',
      'k.prefix',
      'k.scopes',
      'k.person_id',
      'k.revoked_at',
      'p.revision',
      'people.name as person_name',
      dbClock(db).as('db_now'),
    ])
    .executeTakeFirst();
}

export interface NewSession {
  production_id: number;
  token_hash: string;
  csrf_token: string;
  key_id: number;
  sign_in_id: number;
  email: string;
  name: string;
  role: ConsoleRole;
  address: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ends_at: string;
}

export async function insertSession(db: Db, row: NewSession): Promise<number> {
  const out = await db.insertInto('console_sessions').values(row).returning('id').executeTakeFirstOrThrow();
  return out.id;
}

/** Pushes a live session's idle end ahead (never past its `ends_at`, which the caller has applied). */
export async function slideSession(db: Db, id: number, seenAt: string, expiresAt: string): Promise<void> {
  await db
    .updateTable('console_sessions')
    .set({ last_seen_at: seenAt, expires_at: expiresAt })
    .where('id', '=', id)
    .where('ended_at', 'is', null)
    .execute();
}

/** Ends sessions and revokes the keys they act through; returns the ids it ended now. */
export async function endSessions(db: Db, ids: number[], at: string): Promise<number[]> {
  if (ids.length === 0) return [];
  const ended = await db
    .updateTable('console_sessions')
    .set({ ended_at: at })
    .where('id', 'in', ids)
    .where('ended_at', 'is', null)
    .returning(['id', 'key_id'])
    .execute();
  if (ended.length > 0) {
    await db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where(
        'id',
        'in',
        ended.map((s) => s.key_id),
      )
      .where('revoked_at', 'is', null)
      .execute();
  }
  return ended.map((s) => s.id);
}

/** The live sessions of a production (not ended, not past either end), newest first. */
export function liveSessions(db: Db, productionId: number, now: string) {
  return db
    .selectFrom('console_sessions')
    .where('production_id', '=', productionId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .where('ends_at', '>', now)
    .select(['id', 'email', 'name', 'role', 'address', 'created_at', 'last_seen_at', 'expires_at', 'ends_at'])
    .orderBy('id', 'desc')
    .execute();
}

/** A production's session not yet ended: whose it is. */
export function openSession(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('console_sessions')
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .where('ended_at', 'is', null)
    .select(['id', 'email', 'role'])
    .executeTakeFirst();
}

/** Ids of a production's sessions not yet ended, optionally only those of one sign-in row. */
export async function openSessionIds(db: Db, productionId: number, signInId?: number): Promise<number[]> {
  let query = db
    .selectFrom('console_sessions')
    .where('production_id', '=', productionId)
    .where('ended_at', 'is', null);
  if (signInId !== undefined) query = query.where('sign_in_id', '=', signInId);
  const rows = await query.select('id').execute();
  return rows.map((r) => r.id);
}
