import type { WriteScope } from '../db/change-log.js';
import type { Scope } from '../domain/vocabulary.js';

/**
 * Who is calling, resolved from an API key. Services take this and nothing from HTTP, so
 * REST and MCP apply the very same rules.
 */
export interface Principal {
  keyId: number;
  productionId: number;
  label: string;
  scopes: ReadonlySet<Scope>;
  /** Set for an engagement-bound (vendor) key: every answer is clamped to this engagement. */
  engagementId: number | null;
  personId: number | null;
  personName: string | null;
  /**
   * The production's revision, read with the key at the start of the request: cached answers
   * are filed under it (src/http/answer-cache.ts), so one read per request keeps every cache
   * correct, across processes too.
   */
  revision: number;
}

/** Which requests a route accepts: production-wide keys only, or the round-trip surface too. */
export type Surface = 'production' | 'round-trip';

export interface RouteAuth {
  scopes: readonly Scope[];
  surface: Surface;
}

/** The name a write is recorded under: the key's person when bound to one, else its label. */
export const actorName = (p: Principal): string => p.personName ?? p.label;

/** A write's production and the name its changes are recorded under. */
export const writeScopeOf = (p: Principal): WriteScope => ({
  productionId: p.productionId,
  actor: actorName(p),
});
