import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/*
 * Token: `pgk_` + 8 characters of public id + `_` + 43 characters of secret (256 bits) + 6
 * characters of checksum (CRC-32 of everything before it, base62). The checksum lets the server
 * (and secret scanners) tell a token of ours from a random or mistyped string without a database
 * lookup. Only the prefix (`pgk_` + public id) and the SHA-256 of the whole token are stored.
 *
 * Keys minted before the checksum (`pgk_<8>_<43>`, "legacy") keep working: they are looked up
 * only when their prefix is one the database held when the process first met such a token
 * (see LegacyPrefixes), so a random string of that shape costs no query either.
 */
const TOKEN_RE = /^(pgk_[A-Za-z0-9]{8})_[A-Za-z0-9_-]{43}([A-Za-z0-9]{6})$/;
const LEGACY_RE = /^(pgk_[A-Za-z0-9]{8})_[A-Za-z0-9_-]{43}$/;
const PREFIX_RE = /^(pgk_[A-Za-z0-9]{8})(?:_|$)/;
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHECKSUM_LENGTH = 6;

function publicId(): string {
  const bytes = randomBytes(8);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/** CRC-32 in base62, always 6 characters (62^6 > 2^32). */
export function checksumOf(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62.charAt(n % 62) + out;
    n = Math.floor(n / 62);
  }
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
  const body = `${prefix}_${randomBytes(32).toString('base64url')}`;
  const token = body + checksumOf(body);
  return { token, prefix, hash: hashToken(token) };
}

export type TokenShape = { kind: 'checked' | 'legacy'; prefix: string } | null;

/**
 * What a presented string is, from its characters alone: a checksummed token whose checksum
 * holds, a legacy token, or (null) nothing that can be one of ours. No database is consulted.
 */
export function shapeOf(token: string): TokenShape {
  const [, prefix, checksum] = TOKEN_RE.exec(token) ?? [];
  if (prefix !== undefined) {
    const body = token.slice(0, -CHECKSUM_LENGTH);
    return checksumOf(body) === checksum ? { kind: 'checked', prefix } : null;
  }
  const [, legacy] = LEGACY_RE.exec(token) ?? [];
  return legacy === undefined ? null : { kind: 'legacy', prefix: legacy };
}

/** The prefix named by a token or a bare prefix (`pgk_abcdefgh`), for revoking by either. */
export const prefixOf = (tokenOrPrefix: string): string | null => PREFIX_RE.exec(tokenOrPrefix)?.[1] ?? null;

export function hashMatches(token: string, storedHex: string): boolean {
  const a = Buffer.from(hashToken(token), 'hex');
  const b = Buffer.from(storedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
