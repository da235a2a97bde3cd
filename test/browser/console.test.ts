import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { buildApp, type App } from '../../src/app.js';
import { createEnv, DIALECTS, type TestEnv } from '../support/env.js';
import { loadDemo } from '../support/read.js';
import { Receiver, until } from '../support/receiver.js';
import { axe, launch, shooter, storedEverywhere, watch, type Faults } from './browser.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * The console in a real Chromium against a real server (an HTTP listener on 127.0.0.1, the
 * webhook worker running), on SQLite and on PostgreSQL: what a coordinator does, from a key to
 * a vendor that sees what it was granted, and what a vendor key sees.
 */

const SCENE = 'INT. WARD 9 - NIGHT';

for (const dialect of DIALECTS) {
  describe(`console in Chromium [${dialect}]`, () => {
    let env: TestEnv;
    let app: App;
    let base: string;
    let browser: BrowserContext;
    let profile: string;
    let admin: string;
    let wide: string;
    let receiver: Receiver;
    const shots = shooter(dialect);
    const faults: Array<[string, Faults]> = [];
    const a11y: string[] = [];
    let minted = '';
    let engagementId = 0;

    before(async () => {
      // the webhook test's receiver listens on this machine: loopback must be allowed
      env = await createEnv(dialect, { PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.1/32' });
      await loadDemo(env, 'episodic');
      admin = await env.mint({ production: 'nightfall', scopes: ['read', 'admin'], label: 'coordinator' });
      wide = await env.mint({ production: 'nightfall', scopes: ['read', 'write'], label: 'pipeline' });
      app = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      receiver = await new Receiver().start();
      profile = await mkdtemp(join(tmpdir(), 'prodgraph-chromium-'));
      browser = await launch(profile);
      await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    });

    after(async () => {
      await browser?.close();
      await rm(profile, { recursive: true, force: true });
      await receiver?.close();
      await app?.close();
      await env?.close();
    });

    /** A fresh tab (its own sessionStorage), watched for faults, checked by axe on each page it shows. */
    async function tab(name: string): Promise<{ context: { close(): Promise<void> }; page: Page }> {
      const page = await browser.newPage();
      faults.push([name, watch(page)]);
      return { context: { close: () => page.close() }, page };
    }

    async function checked(page: Page, name: string) {
      await shots.shot(page, name);
      for (const v of await axe(page))
        a11y.push(
          `${name}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
        );
    }

    const heading = (page: Page, name: string | RegExp) =>
      page.getByRole('heading', { level: 1, name }).waitFor();

    let signInShown = false;
    async function signIn(page: Page, key: string) {
      await page.goto(`${base}/console`);
      await page.getByLabel('API key').waitFor();
      if (!signInShown) await checked(page, 'sign-in');
      signInShown = true;
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }

    const go = (page: Page, section: string) =>
      page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: section }).click();

    it('an admin key signs in and browses: overview, scenes with images, assets, approvals, deliveries', async () => {
      const { context, page } = await tab('admin browsing');
      await signIn(page, admin);
      await heading(page, 'Overview');
      await page.getByText('Live', { exact: false }).first().waitFor();
      await page.getByText('Nightfall').first().waitFor();
      await checked(page, 'overview');

      await go(page, 'Scenes');
      await heading(page, 'Scenes');
      await checked(page, 'scenes');
      await page.getByRole('link', { name: '1', exact: true }).first().click();
      await heading(page, /^Scene 1/);
      await page.locator('article img').first().waitFor();
      await checked(page, 'scene');
      const src = await page.locator('article img').first().getAttribute('src');
      assert.match(String(src), /^blob:/);

      await go(page, 'Assets');
      await heading(page, 'Assets');
      await page.locator('table tbody tr').first().waitFor();
      const all = await page.locator('table tbody tr').count();
      await page.getByLabel('Department').selectOption('costume');
      await until(
        'the costume filter',
        async () => (await page.locator('table tbody tr').count()) < all,
        10_000,
      );
      await checked(page, 'assets');

      await go(page, 'Approvals');
      await heading(page, 'Approvals');
      await page.locator('table tbody tr').first().waitFor();
      await checked(page, 'approvals');
      await go(page, 'Deliveries');
      await heading(page, 'Deliveries');
      await page.locator('table tbody tr').first().waitFor();
      await checked(page, 'deliveries');

      // the overview follows the change feed: a write elsewhere shows up without a reload
      await go(page, 'Overview');
      await heading(page, 'Overview');
      await page.locator('.live.live').waitFor();
      const asset = (
        await env.handle.db
          .selectFrom('nodes')
          .where('kind', '=', 'prop')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
      const note = await fetch(`${base}/api/v1/assets/${asset}/notes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${wide}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Check the trolley wheels before the wide' }),
      });
      assert.equal(note.status, 201, await note.text());
      await page
        .getByText(/Check the trolley wheels|noted/)
        .first()
        .waitFor({ timeout: 10_000 });
      await context.close();
    });

    it('engages a vendor, grants it a scene, sees as the vendor with its images, revokes and sees it gone', async () => {
      const { context, page } = await tab('vendor management');
      await signIn(page, admin);
      await heading(page, 'Overview');
      await go(page, 'Vendors');
      await heading(page, 'Vendors');
      await page.getByLabel('Organisation').selectOption({ label: 'Northlight Post' });
      assert.equal(await page.getByLabel('Reference').inputValue(), 'eng-org-northlight');
      await page.getByLabel('Reference').fill('eng-northlight');
      await page.getByRole('checkbox', { name: 'Visual Effects' }).check();
      await checked(page, 'vendors');
      await page.getByRole('button', { name: 'Engage' }).click();
      await heading(page, /Northlight Post/);
      engagementId = Number(/#\/vendors\/(\d+)/.exec(page.url())![1]);

      // grant a scene found by its slugline
      await page.getByLabel('Find the scene').fill('ward 9');
      await page
        .getByRole('radio', { name: new RegExp(SCENE) })
        .first()
        .check();
      await page.getByRole('button', { name: 'Grant', exact: true }).click();
      await page.getByRole('row', { name: new RegExp(`Scene: .*${SCENE}`) }).waitFor();
      await checked(page, 'engagement');

      await page.getByRole('link', { name: 'See as vendor' }).click();
      await heading(page, /See as Northlight Post/);
      const scene = page.locator('details', { hasText: SCENE });
      await scene.locator('img').first().waitFor();
      const images = await scene
        .locator('img')
        .evaluateAll((imgs: any[]) =>
          imgs.map((i) => ({ src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0, alt: i.alt })),
        );
      assert.ok(images.length >= 2, `images: ${JSON.stringify(images)}`);
      for (const i of images) {
        assert.match(i.src, /^blob:/);
        assert.ok(i.alt);
      }
      await until(
        'every image to arrive and decode',
        async () =>
          (await scene.locator('.thumb-wait').count()) === 0 &&
          (await scene
            .locator('img')
            .evaluateAll((imgs: any[]) => imgs.every((i) => i.complete && i.naturalWidth > 0))),
      );
      await checked(page, 'see-as-vendor');

      // revoke it in the other pane, refresh the view: gone
      await page.getByRole('link', { name: /Grants and keys/ }).click();
      await heading(page, /Northlight Post/);
      const row = page.getByRole('row', { name: new RegExp(`Scene: .*${SCENE}`) });
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Yes, revoke' }).click();
      await row.getByText(/^Revoked/).waitFor();
      await page.getByRole('link', { name: 'See as vendor' }).click();
      await heading(page, /See as Northlight Post/);
      await page.getByText('No scene is granted.').waitFor();
      assert.equal(await page.locator('details', { hasText: SCENE }).count(), 0);
      await checked(page, 'see-as-vendor-revoked');
      await context.close();
    });

    it('mints a key shown once, never again, that works against the API', async () => {
      const { context, page } = await tab('keys');
      await signIn(page, admin);
      await heading(page, 'Overview');
      await page.goto(`${base}/console#/vendors/${engagementId}`);
      await heading(page, /Northlight Post/);
      // grant the scene again, and the turnover, so the key has something to see
      await page.getByLabel('Find the scene').fill('ward 9');
      await page
        .getByRole('radio', { name: new RegExp(SCENE) })
        .first()
        .check();
      await page.getByRole('button', { name: 'Grant', exact: true }).click();
      await page.getByRole('row', { name: /Scene: .*Live/ }).waitFor();

      await page.getByLabel('Label').fill('Northlight pipeline');
      await page.getByRole('button', { name: 'Mint key' }).click();
      const secret = page.locator('[data-secret]');
      await secret.waitFor();
      minted = (await secret.innerText()).trim();
      assert.match(minted, /^pgk_/);
      await checked(page, 'key-minted');
      await page.getByRole('button', { name: 'Copy key' }).click();
      await page.getByText('Copied.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), minted);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await page.getByRole('row', { name: /Northlight pipeline/ }).waitFor();
      assert.ok(!(await page.content()).includes(minted), 'the token is gone from the page');
      await page.reload();
      await page.getByRole('row', { name: /Northlight pipeline/ }).waitFor();
      assert.ok(!(await page.content()).includes(minted), 'and never shown again');
      assert.ok((await page.content()).includes(minted.slice(0, 12)), 'its prefix is listed');

      const bundles = await fetch(`${base}/api/v1/bundles`, {
        headers: { authorization: `Bearer ${minted}` },
      });
      assert.equal(bundles.status, 200);
      const body = (await bundles.json()) as any[];
      assert.deepEqual(
        body.map((b) => b.slugline),
        [SCENE],
      );
      const refused = await fetch(`${base}/api/v1/production`, {
        headers: { authorization: `Bearer ${minted}` },
      });
      assert.equal(refused.status, 403, 'a vendor key stays on the round-trip surface');
      await context.close();
    });

    it('adds a webhook (secret shown once) and sees a delivery in its log after a write', async () => {
      const { context, page } = await tab('webhooks');
      await signIn(page, admin);
      await heading(page, 'Overview');
      await go(page, 'Webhooks');
      await heading(page, 'Webhooks');
      await page.getByLabel('Receiver URL').fill(receiver.url);
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const secret = (await page.locator('[data-secret]').innerText()).trim();
      assert.match(secret, /^whsec_/);
      await checked(page, 'webhook-added');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      assert.ok(!(await page.content()).includes(secret));

      const asset = (
        await env.handle.db
          .selectFrom('nodes')
          .where('kind', '=', 'prop')
          .select('id')
          .executeTakeFirstOrThrow()
      ).id;
      const write = await fetch(`${base}/api/v1/assets/${asset}/notes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${wide}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'A write for the webhook' }),
      });
      assert.equal(write.status, 201);
      await until('the receiver to get it', () => receiver.got.length > 0, 15_000);

      await page.getByRole('link', { name: receiver.url }).click();
      await heading(page, /Deliveries to/);
      await until(
        'a delivered row in the log',
        async () => {
          if ((await page.getByRole('cell', { name: 'Delivered' }).count()) > 0) return true;
          await page.getByRole('button', { name: /Refresh/ }).click();
          await page.waitForTimeout(300);
          return false;
        },
        15_000,
      );
      await checked(page, 'webhook-log');
      await context.close();
    });

    it('a vendor key sees only its own view; sign out leaves nothing in storage', async () => {
      assert.ok(minted, 'the key minted above');
      const { context, page } = await tab('vendor key');
      await signIn(page, minted);
      await heading(page, /What Northlight Post sees/);
      const scene = page.locator('details', { hasText: SCENE });
      await scene.locator('img').first().waitFor();
      assert.equal(await page.getByRole('navigation', { name: 'Sections' }).count(), 0, 'one page only');
      assert.equal(await page.getByRole('link', { name: 'Vendors' }).count(), 0);
      await checked(page, 'vendor-home');
      await page.goto(`${base}/console#/vendors`);
      await heading(page, 'No such page');

      const stored = await storedEverywhere(browser, page);
      assert.equal(stored.session.length, 1, 'the key is in this tab’s sessionStorage while signed in');
      assert.deepEqual([stored.local, stored.cookies, stored.idb, stored.caches], [[], [], [], []]);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor();
      const after = await storedEverywhere(browser, page);
      assert.deepEqual(
        [after.session, after.local, after.cookies, after.idb, after.caches],
        [[], [], [], [], []],
      );
      assert.ok(!(await page.content()).includes(minted));
      assert.ok(!page.url().includes(minted));
      await page.reload();
      await page.getByLabel('API key').waitFor();
      await context.close();
    });

    it('an API refusal is shown in the server’s words, never a blank page; a key revoked meanwhile signs the page out', async () => {
      const { context, page } = await tab('refusals');
      faults.pop(); // this tab provokes refusals on purpose (Chromium logs each as a console error)
      await signIn(page, 'pgk_not_a_real_key');
      await page
        .getByRole('alert')
        .getByText(/API key/)
        .waitFor();
      await checked(page, 'sign-in-refused');

      // the keyboard alone: the key field has the focus, Enter signs in
      await page.getByLabel('API key').fill('');
      await page.keyboard.type(minted);
      await page.keyboard.press('Enter');
      await heading(page, /What Northlight Post sees/);
      // the page has shown what it sees (its first answers are in) when the key is revoked
      await page.locator('details', { hasText: SCENE }).locator('img').first().waitFor();
      await page.getByRole('button', { name: 'Refresh', disabled: false }).waitFor();
      const keys = (await (
        await fetch(`${base}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${admin}` } })
      ).json()) as any[];
      const id = keys.find((k) => minted.startsWith(k.prefix)).id;
      const revoked = await fetch(`${base}/api/v1/admin/keys/${id}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}` },
      });
      assert.equal(revoked.status, 200);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page
        .getByRole('alert')
        .getByText(/revoked/)
        .waitFor();
      await page.getByLabel('API key').waitFor();
      assert.deepEqual((await storedEverywhere(browser, page)).session, []);
      await context.close();
    });

    it('a key revoked at any moment, even with requests in flight, returns the page to signing in, saying why', async () => {
      for (const delay of [0, 30, 60, 90, 120]) {
        const { context, page } = await tab('revoked in flight');
        faults.pop(); // refusals on purpose
        const key = await env.mint({ production: 'nightfall', engagement: 'eng-pixel', scopes: ['read'] });
        await signIn(page, key);
        await heading(page, /sees/);
        await new Promise((resolve) => setTimeout(resolve, delay));
        const prefix = key.split('_').slice(0, 2).join('_');
        await env.handle.db
          .updateTable('api_keys')
          .set({ revoked_at: new Date().toISOString() })
          .where('prefix', '=', prefix)
          .execute();
        const refresh = page.getByRole('button', { name: 'Refresh' });
        // signed out already by a request in flight, or by the next one
        await refresh.click({ timeout: 5000 }).catch(() => undefined);
        await page.getByRole('alert').getByText('unknown or revoked API key').waitFor();
        await context.close();
      }
    });

    it('no console errors, no failed requests, nothing off 127.0.0.1, no serious accessibility violation', () => {
      for (const [name, f] of faults) {
        assert.deepEqual(f.consoleErrors, [], `${name}: console errors`);
        assert.deepEqual(f.pageErrors, [], `${name}: page errors`);
        assert.deepEqual(f.failedRequests, [], `${name}: failed requests`);
        assert.deepEqual(f.refused, [], `${name}: refused requests`);
        assert.deepEqual(f.offHost, [], `${name}: requests off 127.0.0.1`);
        for (const a of f.abandoned)
          assert.match(a, /^GET .*\/api\/v1\//, `${name}: only API reads are ever cancelled`);
      }
      assert.deepEqual(a11y, []);
      assert.ok(shots.taken.length >= 15, `screenshots: ${shots.taken.join(', ')}`);
    });
  });
}
