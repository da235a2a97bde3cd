import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/*
 * A real OpenID provider for the tests: oidc-provider (a certified implementation) on loopback,
 * with one confidential client and a few accounts. Its development login page takes any login;
 * the login names the account.
 */

export const CLIENT_ID = 'prodgraph-console';
export const CLIENT_SECRET = 'a-test-client-secret-of-enough-length';

/** The test accounts, by login: what the provider says about each. */
export const ACCOUNTS: Record<
  string,
  { email: string; name: string; email_verified: boolean; groups: string[] }
> = {
  ana: { email: 'ana@studio.test', name: 'Ana Ruiz (IdP)', email_verified: true, groups: ['post'] },
  carl: { email: 'Carl@Studio.test', name: 'Carl Ito', email_verified: true, groups: ['post'] },
  vic: { email: 'vic@studio.test', name: 'Vic Viewer', email_verified: true, groups: [] },
  una: { email: 'una@studio.test', name: 'Una Mapped-Not', email_verified: true, groups: ['post'] },
  eve: { email: 'eve@outside.test', name: 'Eve Outside', email_verified: true, groups: ['post'] },
  ulla: { email: 'ulla@studio.test', name: 'Ulla Unverified', email_verified: false, groups: ['post'] },
};

export interface TestProvider {
  issuer: string;
  close(): Promise<void>;
}

/** Starts the provider on a free loopback port, trusting the given redirect URIs for its client. */
export async function startProvider(redirectUris: string[]): Promise<TestProvider> {
  let handle: ReturnType<Provider['callback']> | null = null;
  // the issuer names the port, so the server listens before the provider exists
  const server: Server = createServer((req, res) => void handle!(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const account = ACCOUNTS[id];
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
  });
  handle = provider.callback();
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A cookie jar for the provider's pages (one browser), ignoring paths: enough for one host. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

const decode = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&#x2F;/g, '/')
    .replace(/&#x3D;/g, '=');

/**
 * Goes through the provider's pages as a browser would, from its authorization URL: the login
 * form (with `login`), then the consent form, following redirects until the provider sends the
 * browser back to `back` (the redirect URI's origin). Returns that URL.
 */
export async function throughProvider(authorizeUrl: string, login: string, back: string): Promise<string> {
  const jar = new Jar();
  let url = authorizeUrl;
  let form: URLSearchParams | null = null;
  for (let step = 0; step < 20; step++) {
    const res: Response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: form.toString() } : {}),
    });
    jar.take(res);
    form = null;
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url).href;
      if (url.startsWith(back)) return url;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`the provider answered ${res.status} without a form: ${html.slice(0, 300)}`);
    form = new URLSearchParams();
    for (const [input] of html.matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(input)?.[1];
      if (name) form.set(name, /value="([^"]*)"/.exec(input)?.[1] ?? '');
    }
    if (form.has('login')) form.set('login', login);
    if (form.has('password')) form.set('password', 'any');
    url = new URL(decode(action), url).href;
  }
  throw new Error('the provider never sent the browser back');
}
