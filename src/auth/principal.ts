import type { WriteScope } from '../db/change-log.js';
import type { ConsoleRole, Scope } from '../domain/vocabulary.js';

/** The person a console session signed in as: who everything done through it is recorded under. */
export interface SessionPerson {
  /** The production's person the sign-in maps to, when it names one. */
  id: number | null;
  email: string;
  name: string;
}

/**
 * Who is calling, resolved from an API key. Services take this and nothing from HTTP, so
 * REST and MCP apply the very same rules.
 */
export interface Principal {
  keyId: number;
  /** The key's recognisable prefix (never its secret): how an audit row names the key. */
  keyPrefix: string;
  productionId: number;
  label: string;
  scopes: ReadonlySet<Scope>;
  /** Set for an engagement-bound (vendor) key: every answer is clamped to this engagement. */
  engagementId: number | null;
  personId: number | null;
  personName: string | null;
  /**
   * The production's revision, read with the key at the start of the request: cached answers
   * are filed under it (AnswerCache), so one read per request keeps every cache
   * correct, across processes too.
   */
  revision: number;
  /**
   * The database's clock, in milliseconds, as read with the key: what a key's and a grant's
   * expiry are judged against, so every server of a deployment judges them alike whatever its
   * own clock says. Absent outside a request (the host's clock then).
   */
  judgedAt?: number;
  /** The client's address as the HTTP layer saw it (Fastify's `request.ip`); null outside a request. */
  address: string | null;
  /** Set when the caller is a console session (a cookie), not a bearer key. */
  session?: { id: number; role: ConsoleRole; csrfToken: string };
  /** The signed-in person of a console session. */
  person?: SessionPerson;
}

/** Which requests a route accepts: production-wide keys only, or the round-trip surface too. */
export type Surface = 'production' | 'round-trip';

export interface RouteAuth {
  scopes: readonly Scope[];
  surface: Surface;
  /**
   * Keys, webhooks and who may sign in: credentials, managed by an `admin` scope and, of the
   * signed-in people, by admins only (a coordinator holds `admin` for everything else).
   */
  credentials?: true;
}

/** The name a write is recorded under: the key's person when bound to one, else its label. */
export const actorName = (p: Principal): string => p.personName ?? p.label;

/**
 * Who made a write, as the activity feed and the change feed both record it: the key's person
 * and the key (`Ana Ruiz via Nuke publish`) when the key is bound to a person, else the key's
 * label. Naming the key tells a reader which credential acted, not only in whose name.
 */
export const keyActor = (p: Principal): string => (p.personName ? `${p.personName} via ${p.label}` : p.label);

/** A write's production and the name its changes are recorded under (the key included). */
export const writeScopeOf = (p: Principal): WriteScope => ({
  productionId: p.productionId,
  actor: keyActor(p),
});

/** Every scope a vendor key can hold: the view of an engagement is what its widest key is answered. */
export const VENDOR_SCOPES: readonly Scope[] = ['read', 'submit:turnover', 'read:money'];

/**
 * An administrator's principal seen as a key bound to one engagement of the same production:
 * the round-trip services answer it exactly what that engagement's keys are answered, because
 * they judge the engagement's live grants themselves (Clamp). The caller must have
 * checked that the engagement belongs to the production. Nothing is minted and nothing stored.
 */
export const asEngagement = (admin: Principal, engagementId: number): Principal => ({
  ...admin,
  scopes: new Set(VENDOR_SCOPES),
  engagementId,
  personId: null,
  personName: null,
});
