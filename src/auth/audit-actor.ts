import { keyActor, type Principal, type SessionPerson } from './principal.js';
import type { ConsoleRole } from '../domain/vocabulary.js';

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

/** How a signed-in person is named: `Ana Ruiz <ana@studio.example> (console, coordinator)`. */
export const consoleActorName = (person: SessionPerson, role: ConsoleRole): string =>
  `${person.name} <${person.email}> (console, ${role})`;

/**
 * The one description of a principal for the audit trail. A console session is named by its
 * person (the key it acts through is the session's own, named by prefix only).
 */
export const actorOf = (p: Principal): AuditActor => ({
  actor: p.session && p.person ? consoleActorName(p.person, p.session.role) : keyActor(p),
  personId: p.person ? p.person.id : p.personId,
  keyId: p.keyId,
  keyPrefix: p.keyPrefix,
  keyLabel: p.label,
  engagementId: p.engagementId,
  ip: p.address,
});

/** A person signing in: named as their session will be, before any request was made with it. */
export const signInActor = (
  person: SessionPerson,
  role: ConsoleRole,
  key: { id: number; prefix: string; label: string },
  ip: string | null,
): AuditActor => ({
  actor: consoleActorName(person, role),
  personId: person.id,
  keyId: key.id,
  keyPrefix: key.prefix,
  keyLabel: key.label,
  engagementId: null,
  ip,
});

/**
 * Someone the identity provider sent back and the service turned away: named by the email the
 * provider gave (an email is no secret), or as unidentified when it gave none.
 */
export const refusedActor = (email: string | null, ip: string | null): AuditActor => ({
  actor: email ?? 'unidentified (console sign-in)',
  personId: null,
  keyId: null,
  keyPrefix: null,
  keyLabel: null,
  engagementId: null,
  ip,
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
