import { createHash } from 'node:crypto';
import type { OidcConfig } from '../../config-sign-in.js';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';
import { isOneOf, CONSOLE_ROLES, type ConsoleRole } from '../../domain/vocabulary.js';
import { errors } from '../../errors.js';
import { authorizationUrl, identityFrom, newSignInSecrets, type Identity } from '../../auth/oidc.js';
import type { Principal } from '../../auth/principal.js';
import { endSessionsOf, startSession } from '../../auth/session-service.js';
import * as repo from './repository.js';
import type { AllowedPerson, ConsoleSession } from './schemas.js';

/*
 * Signing in with the studio's identity provider. The provider says who the person is; the
 * `sign_in_people` table (managed by admins in the console, the API and the CLI) says whether
 * they may come in, to which production, as which role and which person. The allowed domains
 * and groups (PRODGRAPH_OIDC_ALLOWED_DOMAINS, PRODGRAPH_OIDC_REQUIRED_GROUPS) narrow it further.
 */

/** A sign-in started must come back within this. */
const ATTEMPT_MINUTES = 10;
const hashOf = (s: string): string => createHash('sha256').update(s).digest('hex');

export const CALLBACK_PATH = '/api/v1/auth/oidc/callback';
export const CONSOLE_PATH = '/console';

function oidcOf(ctx: AppContext): { oidc: OidcConfig; publicUrl: string } {
  const { oidc, publicUrl } = ctx.config.signIn;
  if (!oidc || !publicUrl) throw errors.notFound('sign-in with an identity provider (not configured here)');
  return { oidc, publicUrl };
}

/** Starts a sign-in: the provider's URL to send the browser to, and the state its cookie keeps. */
export async function beginSignIn(ctx: AppContext, production: string | undefined) {
  const { oidc, publicUrl } = oidcOf(ctx);
  const secrets = newSignInSecrets();
  const now = Date.now();
  await repo.deleteStaleAttempts(ctx.db, new Date(now).toISOString());
  await repo.insertAttempt(ctx.db, {
    state_hash: hashOf(secrets.state),
    code_verifier: secrets.codeVerifier,
    nonce: secrets.nonce,
    production_code: production ?? null,
    expires_at: new Date(now + ATTEMPT_MINUTES * 60_000).toISOString(),
  });
  let url: URL;
  try {
    url = await authorizationUrl(oidc, publicUrl + CALLBACK_PATH, secrets);
  } catch {
    throw errors.badGateway('the identity provider could not be reached (its discovery document)');
  }
  return { url: url.href, state: secrets.state };
}

/** Why a sign-in was refused: shown to the person by the console, logged by the server. */
export type Refusal =
  | 'no_attempt' // no sign-in of this browser is waiting (cookie lost, replayed, or too late)
  | 'provider' // the provider refused, or its answer did not check out
  | 'no_email'
  | 'unverified_email'
  | 'domain' // outside the allowed email domains
  | 'group' // in none of the required groups
  | 'not_allowed' // no row of the people table for this email
  | 'choose_production'; // allowed on several productions and none was named

export type SignInOutcome =
  | { ok: true; token: string; email: string; sessionId: number }
  | { ok: false; refusal: Refusal; email: string | null };

export interface Return {
  /** The `state` the browser's cookie kept, and the URL the provider sent it back to. */
  cookieState: string | undefined;
  callbackUrl: URL;
  previousToken: string | null;
  address: string | null;
}

/** Finishes a sign-in the provider sent the browser back from: a new session, or why not. */
export async function finishSignIn(ctx: AppContext, back: Return): Promise<SignInOutcome> {
  const { oidc } = oidcOf(ctx);
  const state = back.callbackUrl.searchParams.get('state');
  // the state must be this browser's own (its cookie), or another's link could sign it in
  if (!back.cookieState || state !== back.cookieState)
    return { ok: false, refusal: 'no_attempt', email: null };
  const attempt = await repo.takeAttempt(ctx.db, hashOf(state));
  if (!attempt || Date.parse(attempt.expires_at) <= Date.now())
    return { ok: false, refusal: 'no_attempt', email: null };
  let identity: Identity;
  try {
    identity = await identityFrom(oidc, back.callbackUrl, {
      state,
      nonce: attempt.nonce,
      codeVerifier: attempt.code_verifier,
    });
  } catch {
    return { ok: false, refusal: 'provider', email: null };
  }
  const refusal = refusalOf(oidc, identity);
  if (refusal) return { ok: false, refusal, email: identity.email };
  const email = identity.email!;
  const rows = (await repo.signInsOfEmail(ctx.db, email)).filter(
    (r) => attempt.production_code === null || r.code === attempt.production_code,
  );
  if (rows.length === 0) return { ok: false, refusal: 'not_allowed', email };
  if (rows.length > 1) return { ok: false, refusal: 'choose_production', email };
  const row = rows[0]!;
  const session = await startSession(ctx.db, ctx.config.signIn.session, {
    productionId: row.production_id,
    signInId: row.id,
    email,
    // the production's name for the person when the sign-in maps to one, else the provider's
    name: row.person_name ?? identity.name ?? email,
    role: row.role,
    personId: row.person_id,
    address: back.address,
    previousToken: back.previousToken ?? undefined,
  });
  return { ok: true, token: session.token, email, sessionId: session.id };
}

function refusalOf(oidc: OidcConfig, identity: Identity): Refusal | null {
  if (!identity.email) return 'no_email';
  if (identity.emailVerified === false) return 'unverified_email';
  const domain = identity.email.split('@').pop() ?? '';
  if (oidc.allowedDomains.length > 0 && !oidc.allowedDomains.includes(domain)) return 'domain';
  if (oidc.requiredGroups.length > 0 && !identity.groups.some((g) => oidc.requiredGroups.includes(g))) {
    return 'group';
  }
  return null;
}

/** The console session a request was made with (its CSRF token included, for the console's script). */
export function currentSession(principal: Principal): ConsoleSession {
  if (!principal.session || !principal.person) throw errors.notFound('console session');
  return {
    id: principal.session.id,
    role: principal.session.role,
    email: principal.person.email,
    name: principal.person.name,
    person_id: principal.person.id,
    csrf_token: principal.session.csrfToken,
  };
}

// ---- who may sign in

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class SignInError extends Error {}

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
  by: string,
): Promise<AllowedPerson> {
  const email = normaliseEmail(input.email);
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
  if (!existing) {
    await repo.insertSignIn(db, {
      production_id: productionId,
      email,
      role: input.role,
      person_id: personId,
      created_at: nowIso(),
      created_by: by,
    });
  } else if (existing.role !== input.role || existing.person_id !== personId) {
    await endSessionsOf(db, productionId, existing.id);
    await repo.updateSignIn(db, existing.id, input.role, personId);
  }
  return (await listAllowed(db, productionId)).find((p) => p.email === email)!;
}

/** Withdraws an email's sign-in; its sessions end at once. False when it was not allowed. */
export async function withdrawPerson(
  db: Db,
  productionId: number,
  emailOrId: string | number,
): Promise<boolean> {
  const rows = await repo.signInRows(db, productionId);
  const row = rows.find((r) =>
    typeof emailOrId === 'number' ? r.id === emailOrId : r.email === normaliseEmail(emailOrId),
  );
  if (!row) return false;
  await endSessionsOf(db, productionId, row.id);
  await repo.deleteSignIn(db, row.id);
  return true;
}

export async function productionIdOf(db: Db, code: string): Promise<number> {
  const row = await repo.productionByCode(db, code);
  if (!row) throw new SignInError(`no production with code "${code}"`);
  return row.id;
}
