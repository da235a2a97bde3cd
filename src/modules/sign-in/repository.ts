import type { Db } from '../../db/index.js';
import type { ConsoleRole } from '../../domain/vocabulary.js';

/** The people allowed to sign in to a production, with the person each maps to. */
export function signInRows(db: Db, productionId: number) {
  return db
    .selectFrom('sign_in_people as s')
    .leftJoin('people as p', 'p.id', 's.person_id')
    .where('s.production_id', '=', productionId)
    .select([
      's.id',
      's.email',
      's.role',
      's.person_id',
      'p.ref as person_ref',
      'p.name as person_name',
      's.created_at',
      's.created_by',
    ])
    .orderBy('s.email')
    .execute();
}

/** Every production an email may sign in to, with the production's code. */
export function signInsOfEmail(db: Db, email: string) {
  return db
    .selectFrom('sign_in_people as s')
    .innerJoin('productions as p', 'p.id', 's.production_id')
    .leftJoin('people', 'people.id', 's.person_id')
    .where('s.email', '=', email)
    .select(['s.id', 's.production_id', 's.role', 's.person_id', 'p.code', 'people.name as person_name'])
    .execute();
}

export function findSignIn(db: Db, productionId: number, email: string) {
  return db
    .selectFrom('sign_in_people')
    .where('production_id', '=', productionId)
    .where('email', '=', email)
    .select(['id', 'role', 'person_id'])
    .executeTakeFirst();
}

export async function insertSignIn(
  db: Db,
  row: {
    production_id: number;
    email: string;
    role: ConsoleRole;
    person_id: number | null;
    created_at: string;
    created_by: string;
  },
): Promise<number> {
  const out = await db.insertInto('sign_in_people').values(row).returning('id').executeTakeFirstOrThrow();
  return out.id;
}

export async function updateSignIn(
  db: Db,
  id: number,
  role: ConsoleRole,
  personId: number | null,
): Promise<void> {
  await db.updateTable('sign_in_people').set({ role, person_id: personId }).where('id', '=', id).execute();
}

/** Deleting the row deletes its sessions too (they refer to it); the caller ends them first. */
export async function deleteSignIn(db: Db, id: number): Promise<void> {
  await db.deleteFrom('sign_in_people').where('id', '=', id).execute();
}

export function personByRef(db: Db, productionId: number, ref: string) {
  return db
    .selectFrom('people')
    .where('production_id', '=', productionId)
    .where('ref', '=', ref)
    .select(['id', 'ref', 'name'])
    .executeTakeFirst();
}

/** The production's person with this email (compared in lower case), if exactly one has it. */
export async function personByEmail(db: Db, productionId: number, email: string) {
  const rows = await db
    .selectFrom('people')
    .where('production_id', '=', productionId)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
    .select(['id', 'ref', 'name'])
    .limit(2)
    .execute();
  return rows.length === 1 ? rows[0] : undefined;
}

export function productionByCode(db: Db, code: string) {
  return db.selectFrom('productions').where('code', '=', code).select(['id', 'code']).executeTakeFirst();
}

export async function insertAttempt(
  db: Db,
  row: {
    state_hash: string;
    code_verifier: string;
    nonce: string;
    production_code: string | null;
    expires_at: string;
  },
): Promise<void> {
  await db.insertInto('sign_in_attempts').values(row).execute();
}

/** Forgets sign-ins the browser never came back from. */
export async function deleteStaleAttempts(db: Db, now: string): Promise<void> {
  await db.deleteFrom('sign_in_attempts').where('expires_at', '<', now).execute();
}

/** Takes (reads and deletes) a sign-in attempt: a `state` is good for one return only. */
export async function takeAttempt(db: Db, stateHash: string) {
  const [row] = await db
    .deleteFrom('sign_in_attempts')
    .where('state_hash', '=', stateHash)
    .returning(['code_verifier', 'nonce', 'production_code', 'expires_at'])
    .execute();
  return row;
}
