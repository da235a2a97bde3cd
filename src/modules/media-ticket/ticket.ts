import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import type { AppContext } from '../../context.js';
import type { MediaTicket } from './schemas.js';

export const TICKET_TTL_SECONDS = 15 * 60;

/*
 * Ticket: `<production id>.<key id>.<expiry, unix seconds>.<HMAC-SHA256 of the rest, base64url>`.
 * Tied to the key, so revoking the key kills its tickets; without a configured secret each
 * process draws its own, so tickets die with a restart.
 */
const TICKET_RE = /^(\d{1,15})\.(\d{1,15})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

const processSecrets = new WeakMap<Config, Buffer>();

function secretOf(config: Config): Buffer {
  if (config.ticketSecret) return Buffer.from(config.ticketSecret, 'utf8');
  let secret = processSecrets.get(config);
  if (!secret) {
    secret = randomBytes(32);
    processSecrets.set(config, secret);
  }
  return secret;
}

const sign = (secret: Buffer, body: string): Buffer =>
  createHmac('sha256', secret).update(`prodgraph-media-ticket.v1.${body}`).digest();

export function issueTicket(ctx: AppContext, principal: Principal, now = Date.now()): MediaTicket {
  const expires = Math.floor(now / 1000) + TICKET_TTL_SECONDS;
  const body = `${principal.productionId}.${principal.keyId}.${expires}`;
  const signature = sign(secretOf(ctx.config), body).toString('base64url');
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

/** The claims of a well-formed, correctly signed, unexpired ticket; null otherwise. Pure: no I/O. */
export function readTicket(config: Config, ticket: unknown, now = Date.now()): TicketClaims | null {
  if (typeof ticket !== 'string') return null;
  const m = TICKET_RE.exec(ticket);
  if (!m) return null;
  const [, pid, keyId, expires, signature] = m as unknown as [string, string, string, string, string];
  // Compared as text: decoding first would accept a non-canonical last character (its two
  // spare bits are ignored by the decoder), i.e. a tampered ticket that still verifies.
  const given = Buffer.from(signature, 'ascii');
  const expected = Buffer.from(
    sign(secretOf(config), `${pid}.${keyId}.${expires}`).toString('base64url'),
    'ascii',
  );
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (Number(expires) * 1000 <= now) return null;
  return { productionId: Number(pid), keyId: Number(keyId) };
}
