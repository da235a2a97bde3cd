import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { TICKET_TTL_SECONDS, type SigningSecrets } from '../../auth/signing-secrets.js';
import type { AppContext } from '../../context.js';
import type { MediaTicket } from './schemas.js';

/*
 * Ticket: `<production id>.<key id>.<expiry, unix seconds>.<HMAC-SHA256 of the rest, base64url>`.
 * Tied to the key, so revoking the key kills its tickets. Signed with the deployment's secret
 * (SigningSecrets: the database's, or PRODGRAPH_TICKET_SECRET), so a ticket minted
 * by one server is good on every other; after a rotation the secrets it retired still verify
 * until their tickets have expired.
 */
const TICKET_RE = /^(\d{1,15})\.(\d{1,15})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

const sign = (secret: Buffer, body: string): Buffer =>
  createHmac('sha256', secret).update(`prodgraph-media-ticket.v1.${body}`).digest();

export function issueTicket(ctx: AppContext, principal: Principal, now = Date.now()): MediaTicket {
  const expires = Math.floor(now / 1000) + TICKET_TTL_SECONDS;
  const body = `${principal.productionId}.${principal.keyId}.${expires}`;
  const signature = sign(ctx.secrets.current(), body).toString('base64url');
  return {
    ticket: `${body}.${signature}`,
    expires_at: new Date(expires * 1000).toISOString(),
    production_id: principal.productionId,
  };
}

export interface TicketClaims {
  productionId: number;
  keyId: number;
}

/**
 * The claims of a well-formed, correctly signed (by any secret that still verifies), unexpired
 * ticket; null otherwise. Pure: no I/O.
 */
export function readTicket(secrets: SigningSecrets, ticket: unknown, now = Date.now()): TicketClaims | null {
  if (typeof ticket !== 'string') return null;
  const m = TICKET_RE.exec(ticket);
  if (!m) return null;
  // the four groups are not optional: a match has them all
  const [, pid = '', keyId = '', expires = '', signature = ''] = m;
  if (!secrets.all().some((secret) => signedBy(secret, `${pid}.${keyId}.${expires}`, signature))) return null;
  if (Number(expires) * 1000 <= now) return null;
  return { productionId: Number(pid), keyId: Number(keyId) };
}

function signedBy(secret: Buffer, body: string, signature: string): boolean {
  // Compared as text: decoding first would accept a non-canonical last character (its two
  // spare bits are ignored by the decoder), i.e. a tampered ticket that still verifies.
  const given = Buffer.from(signature, 'ascii');
  const expected = Buffer.from(sign(secret, body).toString('base64url'), 'ascii');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * readTicket, then, when no secret this server knows verifies the signature, once more after
 * reading the secrets again (a rotation through another server): for the file route, where a
 * ticket is taken or refused.
 */
export async function verifyTicket(
  secrets: SigningSecrets,
  ticket: unknown,
  now = Date.now(),
): Promise<TicketClaims | null> {
  const claims = readTicket(secrets, ticket, now);
  if (claims || typeof ticket !== 'string') return claims;
  const m = TICKET_RE.exec(ticket);
  // only an unexpired, well-formed ticket may carry a newer secret's signature
  if (!m || Number(m[3]) * 1000 <= now) return null;
  return (await secrets.reread()) ? readTicket(secrets, ticket, now) : null;
}
