import { keyActor, type Principal } from '../../auth/principal.js';

/**
 * Who an audit row says acted, copied into the row (not referred to), so it still names the
 * actor after a key is revoked or a person removed. Never a token, a ticket or a cookie: a key
 * is named by its prefix and label only.
 */
export interface AuditActor {
  /** As a reader sees it: `Ana Ruiz via console`, a key's label, or `cli (jo@host)`. */
  actor: string;
  personId: number | null;
  keyId: number | null;
  keyPrefix: string | null;
  keyLabel: string | null;
  /** The engagement the actor's key is bound to (a vendor's key); null for a production-wide one. */
  engagementId: number | null;
  /** The client's address, when the action came over HTTP. */
  ip: string | null;
}

/** The one description of a principal for the audit trail. */
export const actorOf = (p: Principal): AuditActor => ({
  actor: keyActor(p),
  personId: p.personId,
  keyId: p.keyId,
  keyPrefix: p.keyPrefix,
  keyLabel: p.label,
  engagementId: p.engagementId,
  ip: p.address,
});

/** An operator at the command line (no key, no address): named as the CLI names its writes. */
export const operatorActor = (name: string): AuditActor => ({
  actor: name,
  personId: null,
  keyId: null,
  keyPrefix: null,
  keyLabel: null,
  engagementId: null,
  ip: null,
});
