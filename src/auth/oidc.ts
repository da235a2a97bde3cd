import * as client from 'openid-client';
import type { OidcConfig } from '../config-sign-in.js';

/*
 * The OpenID Connect relying party, through openid-client: discovery from the issuer,
 * authorization code with PKCE (S256), state and nonce, and the ID token's checks (signature,
 * issuer, audience, expiry, nonce) are the library's. Nothing here is kept but the discovered
 * provider metadata, per process; a sign-in's state lives in the database
 * (insertAttempt, takeAttempt), so the browser may come back to any server.
 */

const discovered = new WeakMap<OidcConfig, Promise<client.Configuration>>();

/** The provider's configuration, discovered once per process (again after a failure). */
function providerOf(oidc: OidcConfig): Promise<client.Configuration> {
  let found = discovered.get(oidc);
  if (!found) {
    const plain = new URL(oidc.issuer).protocol === 'http:'; // loopback only (parseSignIn)
    found = client.discovery(
      new URL(oidc.issuer),
      oidc.clientId,
      oidc.clientSecret,
      undefined,
      plain ? { execute: [client.allowInsecureRequests] } : undefined,
    );
    found.catch(() => discovered.delete(oidc));
    discovered.set(oidc, found);
  }
  return found;
}

export interface SignInSecrets {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export const newSignInSecrets = (): SignInSecrets => ({
  state: client.randomState(),
  nonce: client.randomNonce(),
  codeVerifier: client.randomPKCECodeVerifier(),
});

/** Where to send the browser to sign in. */
export async function authorizationUrl(
  oidc: OidcConfig,
  redirectUri: string,
  secrets: SignInSecrets,
): Promise<URL> {
  const provider = await providerOf(oidc);
  return client.buildAuthorizationUrl(provider, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    state: secrets.state,
    nonce: secrets.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
    code_challenge_method: 'S256',
  });
}

/** Who the provider says signed in. */
export interface Identity {
  subject: string;
  email: string | null;
  /** False only when the provider says the address is unverified; some (Entra) never say. */
  emailVerified: boolean | null;
  name: string | null;
  groups: string[];
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/**
 * Exchanges the code the provider sent the browser back with (`callbackUrl`, the full URL) for
 * tokens, checks the ID token, and reads the identity from its claims and, for what they lack,
 * the userinfo endpoint.
 */
export async function identityFrom(
  oidc: OidcConfig,
  callbackUrl: URL,
  secrets: SignInSecrets,
): Promise<Identity> {
  const provider = await providerOf(oidc);
  const tokens = await client.authorizationCodeGrant(provider, callbackUrl, {
    pkceCodeVerifier: secrets.codeVerifier,
    expectedState: secrets.state,
    expectedNonce: secrets.nonce,
    idTokenExpected: true,
  });
  let claims: Record<string, unknown> = { ...tokens.claims() };
  if (!text(claims.email) || claims[oidc.groupsClaim] === undefined) {
    const info = await client.fetchUserInfo(provider, tokens.access_token, String(claims.sub));
    claims = { ...info, ...claims, email: claims.email ?? info.email };
    if (claims[oidc.groupsClaim] === undefined) claims[oidc.groupsClaim] = info[oidc.groupsClaim];
    if (claims.email_verified === undefined) claims.email_verified = info.email_verified;
  }
  const groups = claims[oidc.groupsClaim];
  return {
    subject: String(claims.sub),
    email: text(claims.email)?.toLowerCase() ?? null,
    emailVerified: typeof claims.email_verified === 'boolean' ? claims.email_verified : null,
    name: text(claims.name) ?? text(claims.preferred_username),
    groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
  };
}
