import { createHash } from 'node:crypto';
import type { OidcConfig } from '../../config-sign-in.js';
import type { AppContext } from '../../context.js';
import { databaseNow } from '../../db/clock.js';
import type { Db } from '../../db/index.js';
import { errors } from '../../errors.js';
import { authorizationUrl, identityFrom, newSignInSecrets, type Identity } from '../../auth/oidc.js';
import type { Principal } from '../../auth/principal.js';
import { startSession } from '../../auth/session-service.js';
import { refusedActor } from '../../auth/audit-actor.js';
import { recordAudit, recordInstallationAudit } from '../../auth/audit-record.js';
import * as repo from './repository.js';
import type { ConsoleSession } from './schemas.js';

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
  // the database's clock: the provider may send the browser back to another server
  const now = await databaseNow(ctx.db);
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
  const refuse = async (refusal: Refusal, email: string | null, production: string | null = null) => {
    await recordRefusal(ctx.db, { refusal, email, production, address: back.address });
    return { ok: false as const, refusal, email };
  };
  // the state must be this browser's own (its cookie), or another's link could sign it in
  if (!back.cookieState || state !== back.cookieState) return refuse('no_attempt', null);
  const attempt = await repo.takeAttempt(ctx.db, hashOf(state));
  if (!attempt || Date.parse(attempt.expires_at) <= (await databaseNow(ctx.db)))
    return refuse('no_attempt', null, attempt?.production_code);
  const production = attempt.production_code;
  let identity: Identity;
  try {
    identity = await identityFrom(oidc, back.callbackUrl, {
      state,
      nonce: attempt.nonce,
      codeVerifier: attempt.code_verifier,
    });
  } catch {
    return refuse('provider', null, production);
  }
  const refusal = refusalOf(oidc, identity);
  if (refusal) return refuse(refusal, identity.email, production);
  const email = identity.email!;
  const rows = (await repo.signInsOfEmail(ctx.db, email)).filter(
    (r) => production === null || r.code === production,
  );
  if (rows.length === 0) return refuse('not_allowed', email, production);
  if (rows.length > 1) return refuse('choose_production', email, production);
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

const REFUSALS: Record<Refusal, string> = {
  no_attempt: 'no sign-in of this browser was waiting',
  provider: 'the identity provider refused, or its answer did not check out',
  no_email: 'the identity provider gave no email',
  unverified_email: 'the email is not verified',
  domain: 'outside the allowed email domains',
  group: 'in none of the required groups',
  not_allowed: 'this email may not sign in',
  choose_production: 'allowed on several productions and none was named',
};

/**
 * The audit rows of a refused sign-in: the reason and the email the provider gave, never its
 * code, the state or a token. A row belongs to a production, and a refused person often has
 * none: the rows go to the production the sign-in named (`?production=`), else to every
 * production the email may sign in to, else (an unknown email, or no identity at all) to every
 * production here, since the provider, the allowed domains and groups are the installation's
 * and each production's admins should see who was turned away.
 */
async function recordRefusal(
  db: Db,
  r: { refusal: Refusal; email: string | null; production: string | null; address: string | null },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const named = r.production === null ? undefined : await repo.productionByCode(trx, r.production);
    const ids = named
      ? [named.id]
      : r.email
        ? [...new Set((await repo.signInsOfEmail(trx, r.email)).map((s) => s.production_id))]
        : [];
    const entry = {
      actor: refusedActor(r.email, r.address),
      action: 'session.refused',
      summary: `sign-in refused: ${r.refusal} (${REFUSALS[r.refusal]})`,
      outcome: 'refused',
    } as const;
    if (ids.length === 0) await recordInstallationAudit(trx, entry);
    for (const productionId of ids) await recordAudit(trx, { ...entry, productionId });
  });
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
