// No repository or schemas of its own: the sign_in_people rows and their shapes are sign-in's, read at every sign-in.
import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';
import { isOneOf, CONSOLE_ROLES, type ConsoleRole } from '../../domain/vocabulary.js';
import { UserError } from '../../errors.js';
import { endSessionsOf } from '../../auth/session-service.js';
import type { AuditActor } from '../../auth/audit-actor.js';
import { recordAudit } from '../../auth/audit-record.js';
import * as repo from '../sign-in/repository.js';
import type { AllowedPerson } from '../sign-in/schemas.js';

// ---- who may sign in

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An email or role that cannot be given a console sign-in. */
export class SignInError extends UserError {}

export function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 254) throw new SignInError(`"${raw}" is not an email address`);
  return email;
}

export function parseRole(raw: string): ConsoleRole {
  if (!isOneOf(CONSOLE_ROLES, raw))
    throw new SignInError(`role "${raw}" is not one of ${CONSOLE_ROLES.join(', ')}`);
  return raw;
}

export async function listAllowed(db: Db, productionId: number): Promise<AllowedPerson[]> {
  const rows = await repo.signInRows(db, productionId);
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    role: r.role,
    person: r.person_id === null ? null : { id: r.person_id, ref: r.person_ref, name: r.person_name ?? '' },
    created_at: r.created_at,
    created_by: r.created_by,
  }));
}

export interface Allow {
  email: string;
  role: ConsoleRole;
  /** The ref of the production's person this sign-in acts as; default: the person with this email, if one. */
  person?: string;
}

/**
 * Lets an email sign in to a production with a role (again: a new role or person replaces the
 * old one, and the sessions opened under the old one end, so the change counts at once).
 */
export async function allowPerson(
  db: Db,
  productionId: number,
  input: Allow,
  by: AuditActor,
): Promise<AllowedPerson> {
  const email = normaliseEmail(input.email);
  await db.transaction().execute((trx) => allowIn(trx, productionId, email, input, by));
  return (await listAllowed(db, productionId)).find((p) => p.email === email)!;
}

/** The change an allow makes, with its audit row; none when the email is allowed just so already. */
async function allowIn(db: Db, productionId: number, email: string, input: Allow, by: AuditActor) {
  let personId: number | null = null;
  if (input.person) {
    const person = await repo.personByRef(db, productionId, input.person);
    if (!person) throw new SignInError(`no person "${input.person}" in this production`);
    personId = person.id;
  } else {
    // the production's person with this very email, when the document names one
    personId = (await repo.personByEmail(db, productionId, email))?.id ?? null;
  }
  const existing = await repo.findSignIn(db, productionId, email);
  const as = `${email} as ${input.role}${input.person ? ` (person ${input.person})` : ''}`;
  if (!existing) {
    const id = await repo.insertSignIn(db, {
      production_id: productionId,
      email,
      role: input.role,
      person_id: personId,
      created_at: nowIso(),
      created_by: by.actor,
    });
    await auditSignIn(db, productionId, by, 'sign_in_person.allow', id, `allowed ${as}`);
  } else if (existing.role !== input.role || existing.person_id !== personId) {
    const ended = await endSessionsOf(db, productionId, existing.id);
    await repo.updateSignIn(db, existing.id, input.role, personId);
    const was = `was ${existing.role}; ${ended} session${ended === 1 ? '' : 's'} ended`;
    await auditSignIn(db, productionId, by, 'sign_in_person.change', existing.id, `changed ${as} (${was})`);
  }
}

const auditSignIn = (
  db: Db,
  productionId: number,
  actor: AuditActor,
  action: 'sign_in_person.allow' | 'sign_in_person.change' | 'sign_in_person.withdraw',
  id: number,
  summary: string,
) => recordAudit(db, { productionId, actor, action, object: { type: 'sign_in_person', id }, summary });

/** Withdraws an email's sign-in; its sessions end at once. False when it was not allowed. */
export async function withdrawPerson(
  db: Db,
  productionId: number,
  emailOrId: string | number,
  by: AuditActor,
): Promise<boolean> {
  const email = typeof emailOrId === 'number' ? null : normaliseEmail(emailOrId);
  return db.transaction().execute(async (trx) => {
    const rows = await repo.signInRows(trx, productionId);
    const row = rows.find((r) => (email === null ? r.id === emailOrId : r.email === email));
    if (!row) return false;
    const ended = await endSessionsOf(trx, productionId, row.id);
    await repo.deleteSignIn(trx, row.id);
    const summary = `withdrew ${row.email}'s sign-in (${row.role}); ${ended} session${ended === 1 ? '' : 's'} ended`;
    await auditSignIn(trx, productionId, by, 'sign_in_person.withdraw', row.id, summary);
    return true;
  });
}

export async function productionIdOf(db: Db, code: string): Promise<number> {
  const row = await repo.productionByCode(db, code);
  if (!row) throw new SignInError(`no production with code "${code}"`);
  return row.id;
}
