import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * Token: `pgk_` + 8 characters of public id + `_` + 43 characters of secret (256 bits).
 * Only the prefix (`pgk_` + public id) and the SHA-256 of the whole token are stored.
 */
const TOKEN_RE = /^(pgk_[A-Za-z0-9]{8})_[A-Za-z0-9_-]{43}$/;
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

function publicId(): string {
  const bytes = randomBytes(8);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

export interface NewToken {
  token: string;
  prefix: string;
  hash: string;
}

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export function newToken(): NewToken {
  const prefix = `pgk_${publicId()}`;
  const token = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { token, prefix, hash: hashToken(token) };
}

/** The prefix of a well-formed token, or null for anything that cannot be one of ours. */
export const prefixOf = (token: string): string | null => TOKEN_RE.exec(token)?.[1] ?? null;

export function hashMatches(token: string, storedHex: string): boolean {
  const a = Buffer.from(hashToken(token), 'hex');
  const b = Buffer.from(storedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
