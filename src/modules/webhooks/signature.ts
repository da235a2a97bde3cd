import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * Deliveries are signed so a receiver can tell they come from this server and were not
 * replayed later: `Prodgraph-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 * `<t>.<raw body>` with the subscription's secret. The README shows the receiver's side.
 */

export const SIGNATURE_HEADER = 'prodgraph-signature';

export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

export const signatureOf = (secret: string, timestamp: number, body: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

export const signatureHeader = (secret: string, timestamp: number, body: string): string =>
  `t=${timestamp},v1=${signatureOf(secret, timestamp, body)}`;

/**
 * The receiver's check: the header's signature matches the body and its timestamp is within
 * `toleranceSeconds` of now. Exported for tests and for receivers written in TypeScript.
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  body: string,
  toleranceSeconds = 300,
  now = Date.now(),
): boolean {
  if (!header) return false;
  const parts = new Map(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signatureOf(secret, t, body), 'hex');
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
