/*
 * Signing in to the console with the studio's identity provider (OpenID Connect): PRODGRAPH_OIDC_*
 * and PRODGRAPH_PUBLIC_URL, declared and parsed with the rest of the environment (ENVIRONMENT),
 * validated here so a wrong value stops the server at start-up rather than at the first sign-in.
 */

import type { Environment } from './config.js';

export class SignInConfigError extends Error {}

export interface OidcConfig {
  /** The provider's issuer URL; its `/.well-known/openid-configuration` is read at the first sign-in. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Email domains allowed to sign in (lower case); empty: any domain (the people table still decides). */
  allowedDomains: string[];
  /** The ID token or userinfo claim holding the person's groups. */
  groupsClaim: string;
  /** When set, a person must be in one of these groups to sign in. */
  requiredGroups: string[];
}

export interface SessionConfig {
  /** A session unused this long ends; every use pushes its end this far ahead again. */
  idleMinutes: number;
  /** A session ends this long after its sign-in, however much it is used. */
  maxHours: number;
}

export interface SignInConfig {
  /** The address browsers reach the service at (`https://prodgraph.studio.example`), no trailing slash. */
  publicUrl: string | null;
  oidc: OidcConfig | null;
  session: SessionConfig;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A URL without credentials or query; https only, unless `http` allows plain http (loopback always may). */
function parseUrl(name: string, raw: string, http = false): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SignInConfigError(`${name}: "${raw}" is not a URL`);
  }
  const plainOk = url.protocol === 'http:' && (http || LOOPBACK.has(url.hostname));
  if (url.protocol !== 'https:' && !plainOk) {
    throw new SignInConfigError(`${name}: must be an https:// URL (http:// only on loopback)`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new SignInConfigError(`${name}: must carry no user, password, query or fragment`);
  }
  return url;
}

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function parseOidc(env: Environment, publicUrl: string | null): OidcConfig | null {
  const issuer = env.PRODGRAPH_OIDC_ISSUER?.trim();
  if (!issuer) return null;
  const clientId = env.PRODGRAPH_OIDC_CLIENT_ID?.trim();
  const clientSecret = env.PRODGRAPH_OIDC_CLIENT_SECRET;
  if (!clientId) throw new SignInConfigError('PRODGRAPH_OIDC_CLIENT_ID: required with PRODGRAPH_OIDC_ISSUER');
  if (!clientSecret) {
    throw new SignInConfigError('PRODGRAPH_OIDC_CLIENT_SECRET: required with PRODGRAPH_OIDC_ISSUER');
  }
  if (!publicUrl) throw new SignInConfigError('PRODGRAPH_PUBLIC_URL: required with PRODGRAPH_OIDC_ISSUER');
  const domains = list(env.PRODGRAPH_OIDC_ALLOWED_DOMAINS).map((d) => d.toLowerCase().replace(/^@/, ''));
  for (const d of domains) {
    if (!/^[a-z0-9.-]+\.[a-z0-9-]+$/.test(d)) {
      throw new SignInConfigError(`PRODGRAPH_OIDC_ALLOWED_DOMAINS: "${d}" is not a domain`);
    }
  }
  return {
    issuer: parseUrl('PRODGRAPH_OIDC_ISSUER', issuer).href.replace(/\/$/, ''),
    clientId,
    clientSecret,
    allowedDomains: domains,
    groupsClaim: env.PRODGRAPH_OIDC_GROUPS_CLAIM.trim(),
    requiredGroups: list(env.PRODGRAPH_OIDC_REQUIRED_GROUPS),
  };
}

export function parseSignIn(env: Environment): SignInConfig {
  const rawPublic = env.PRODGRAPH_PUBLIC_URL?.trim();
  const publicUrl = rawPublic
    ? parseUrl('PRODGRAPH_PUBLIC_URL', rawPublic, true).href.replace(/\/$/, '')
    : null;
  if (publicUrl && new URL(publicUrl).pathname !== '/') {
    throw new SignInConfigError(
      'PRODGRAPH_PUBLIC_URL: scheme, host and port only (the service is served at /)',
    );
  }
  return {
    publicUrl,
    oidc: parseOidc(env, publicUrl),
    session: {
      idleMinutes: env.PRODGRAPH_SESSION_IDLE_MINUTES,
      maxHours: env.PRODGRAPH_SESSION_MAX_HOURS,
    },
  };
}
