import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { buildApp, type App } from '../../src/app.js';
import { operatorActor } from '../../src/auth/audit-actor.js';
import { allowPerson, productionIdOf } from '../../src/modules/sign-in-admin/service.js';
import { createEnv, DIALECTS, type TestEnv } from '../support/env.js';
import { Factory } from '../support/factory.js';
import { CLIENT_ID, CLIENT_SECRET, startProvider, type TestProvider } from '../support/oidc-provider.js';
import { launch } from './browser.js';

/*
 * Signing in to the console with the studio's identity provider, in Debian's Chromium: a real
 * OpenID provider (oidc-provider on loopback) with its own login and consent pages, the server
 * on a real listener, on both databases.
 */

/** A free loopback port: the public URL (and the provider's redirect URI) must name it before the server starts. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

for (const dialect of DIALECTS) {
  describe(`console sign-in with an identity provider, in Chromium [${dialect}]`, () => {
    let provider: TestProvider;
    let env: TestEnv;
    let app: App;
    let base: string;
    let browser: BrowserContext;
    let profile: string;

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      provider = await startProvider([`${base}/api/v1/auth/oidc/callback`]);
      env = await createEnv(dialect, {
        PRODGRAPH_OIDC_ISSUER: provider.issuer,
        PRODGRAPH_OIDC_CLIENT_ID: CLIENT_ID,
        PRODGRAPH_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        PRODGRAPH_PUBLIC_URL: base,
        PRODGRAPH_OIDC_ALLOWED_DOMAINS: 'studio.test',
      });
      const make = new Factory(env.handle.db);
      const prod = await make.production({ code: 'film', title: 'Nightfall' });
      await make.person(prod.id, { ref: 'p-ana', name: 'Ana Ruiz' });
      const id = await productionIdOf(env.handle.db, 'film');
      await allowPerson(
        env.handle.db,
        id,
        { email: 'ana@studio.test', role: 'admin', person: 'p-ana' },
        operatorActor('test'),
      );
      await allowPerson(
        env.handle.db,
        id,
        { email: 'eve@outside.test', role: 'admin' },
        operatorActor('test'),
      );
      app = await buildApp({ config: env.config, database: env.handle, store: env.store, logger: false });
      await app.listen({ port, host: '127.0.0.1' });
      profile = await mkdtemp(join(tmpdir(), 'prodgraph-chromium-'));
      browser = await launch(profile);
      // the provider's development pages ask for a web font; nothing here may leave the machine
      await browser.route(/^https?:\/\/(?!127\.0\.0\.1)/, (route) => route.abort());
    });

    after(async () => {
      await browser?.close();
      await rm(profile, { recursive: true, force: true });
      await app?.close();
      await env?.close();
      await provider?.close();
    });

    /** From the console's sign-in page through the provider's login and consent pages, as `login`. */
    async function signInAs(page: Page, login: string) {
      await page.goto(`${base}/console`);
      await page.getByRole('link', { name: 'Sign in with your studio account' }).click();
      await page.locator('input[name="login"]').fill(login);
      await page.locator('input[name="password"]').fill('any');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      const consent = page.getByRole('button', { name: 'Continue' });
      // the provider asks for consent once per account and client
      await Promise.race([
        consent.waitFor().then(() => consent.click()),
        page.waitForURL(`${base}/console**`),
      ]);
      await page.waitForURL(`${base}/console**`);
    }

    const sessionCookie = async () =>
      (await browser.cookies(base)).find((c) => c.name === 'prodgraph_session');

    it('signs a mapped person in through the provider: the console as that person and role, and out again, dead at the server', async () => {
      const page = await browser.newPage();
      await signInAs(page, 'ana');
      await page.getByText('Ana Ruiz').first().waitFor();
      await page.getByText('(admin)').waitFor();
      // an admin manages sign-in: the page lists this very session
      await page.getByRole('link', { name: 'Sign-in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign-in' }).waitFor();
      await page.getByRole('cell', { name: 'This session' }).waitFor();
      await page.getByRole('rowheader', { name: 'ana@studio.test', exact: true }).waitFor();

      const cookie = await sessionCookie();
      assert.ok(cookie, 'the session is a cookie');
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Strict');
      assert.equal(
        await page.evaluate('document.cookie.includes("prodgraph_session")'),
        false,
        "the page's script cannot read it",
      );

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('link', { name: 'Sign in with your studio account' }).waitFor();
      const replay = await fetch(`${base}/api/v1/auth/session`, {
        headers: { cookie: `prodgraph_session=${cookie.value}` },
      });
      assert.equal(replay.status, 401, 'the session ended at the server, not only in the tab');
      const row = await env.handle.db
        .selectFrom('console_sessions')
        .where('email', '=', 'ana@studio.test')
        .select('ended_at')
        .executeTakeFirstOrThrow();
      assert.ok(row.ended_at);
      await page.close();
    });

    it('refuses an account nobody allowed, and one outside the allowed domain, saying why', async () => {
      for (const [login, words] of [
        ['una', /not allowed to sign in/],
        ['eve', /email domain may not sign in/],
      ] as const) {
        // a new person at the provider: its own session there is forgotten
        await browser.clearCookies();
        const page = await browser.newPage();
        await signInAs(page, login);
        await page.getByRole('alert').filter({ hasText: words }).waitFor();
        assert.equal(await sessionCookie(), undefined, `${login}: no session`);
        await page.close();
      }
    });
  });
}
