import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { buildApp, type App } from '../../src/app.js';
import { createEnv, DIALECTS, type TestEnv } from '../support/env.js';
import { loadDemo } from '../support/read.js';
import { Receiver, until } from '../support/receiver.js';
import {
  axe,
  expecting,
  launch,
  shooter,
  storedEverywhere,
  watch,
  type Expected,
  type Faults,
} from './browser.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * The console in a real Chromium against a real server (an HTTP listener on 127.0.0.1, the
 * webhook worker running), on SQLite and on PostgreSQL: what a coordinator does, from a key to
 * a vendor that sees what it was granted, and what a vendor key sees.
 */

const SCENE = 'INT. WARD 9 - NIGHT';
const CHARACTER = 'Mara Quinn';
const READ_DELIVERY = 'Episode 101 comps, 3 a.m. light shift';
const SUBMIT_DELIVERY = 'Episode 102 plates, VFX turnover';
const SUBMISSION = 'Ward 9 plates, first pass';
const BROWSE = ['Overview', 'Scenes', 'Assets', 'Approvals', 'Deliveries'];
const MANAGE = ['Vendors', 'Audit', 'Webhooks', 'Sign-in'];
/** The buttons of the management pages: none may show for a key without `admin`. */
const MANAGEMENT =
  /^(Engage|Grant|Mint key|Revoke|Archive|Add webhook|Pause|Resume|Remove)\b|^(Pause|Resume) http/;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every media id a bundle names. */
function mediaIds(value: unknown, out: number[] = []): number[] {
  if (Array.isArray(value)) for (const v of value) mediaIds(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (k === 'media_id' && typeof v === 'number') out.push(v);
      else mediaIds(v, out);
    }
  return out;
}

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
    /** The coordinator's tab, signed in once with the admin key and used by every management test. */
    let cp: Page;

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

    /*
     * Requests a page cancels on purpose, by URL: the overview's long poll when it is left (its
     * URL carries the feed's cursor), and an image still on its way when its page is left.
     */
    const longPoll = () => new RegExp(`^${escape(base)}/api/v1/changes\\?after=[^&]+&wait=25$`);
    const image = () => new RegExp(`^${escape(base)}/api/v1/media/\\d+/content$`);
    const viewImage = () =>
      new RegExp(`^${escape(base)}/api/v1/admin/engagements/\\d+/view/media/\\d+/content$`);

    /** A fresh tab (its own sessionStorage), watched for faults, checked by axe on each page it shows. */
    async function tab(name: string, aborts: Array<string | RegExp> = []) {
      const page = await browser.newPage();
      const expected = expecting(aborts);
      faults.push([name, watch(page, expected)]);
      return { page, expected };
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

    /**
     * Signs out and waits for the sign-in page's one question (whether an identity provider is
     * offered): leaving the page before its answer would cancel it.
     */
    async function signOut(page: Page) {
      await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/sign-in-options')),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      await page.getByLabel('API key').waitFor();
    }

    /**
     * Until the page holds every answer it asked for (nothing shows as loading, no refresh
     * runs): leaving it then cancels nothing but the requests it cancels on purpose.
     */
    const settled = (page: Page) =>
      page
        .locator('.busy, [aria-busy="true"], button:disabled:text-matches("^Refresh")')
        .first()
        .waitFor({ state: 'detached' });
    /** The overview once its feed is live (the badge's "now" is fixed; only the long poll is left running). */
    const live = (page: Page) => page.locator('[class="live live"]').waitFor();

    /** The list of everything a vendor view's engagement submitted (its turnovers show them too). */
    const ownSubmissions = (page: Page) =>
      page.locator('section', { has: page.getByRole('heading', { name: /^Its submissions/ }) });

    /** The character's section of a vendor view (the scene's text names her too). */
    const characterIn = (page: Page) =>
      page.locator('details', { has: page.locator('summary', { hasText: new RegExp(`^${CHARACTER}`) }) });

    /** A bundle's first image, once scrolled into view (images load only when seen). */
    async function imagesOf(section: Locator) {
      const first = section.locator('.thumb').first();
      await first.waitFor();
      await first.scrollIntoViewIfNeeded();
      await section.locator('img').first().waitFor();
    }

    const nav = (page: Page) => page.getByRole('navigation', { name: 'Sections' });
    const go = (page: Page, section: string) => nav(page).getByRole('link', { name: section }).click();
    const sections = (page: Page) => nav(page).getByRole('link').allInnerTexts();

    const api = async (path: string, key = admin) => {
      const r = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: r.status, body: (await r.json()) as any };
    };

    /** The engagement's page, its answers fresh (a page already there is reloaded: the same address changes nothing). */
    async function showEngagement(page: Page) {
      const url = `${base}/console#/vendors/${engagementId}`;
      if (page.url() === url) await page.reload();
      else await page.goto(url);
      await heading(page, /Northlight Post/);
      await page.getByRole('heading', { name: 'Grants' }).waitFor();
      await settled(page);
    }

    const PLURAL: Record<string, string> = {
      scene: 'scenes',
      character: 'characters',
      delivery: 'deliveries',
    };

    /** Picks what to grant: the search's first answer is in before it is narrowed (nothing is cut short). */
    async function pickTarget(page: Page, noun: string, text: string, name: RegExp) {
      const found = page.getByRole('group', { name: `Matching ${PLURAL[noun]}` });
      await found.getByRole('radio').first().waitFor();
      await settled(page);
      await page.getByLabel(`Find the ${noun}`).fill(text);
      await found.and(page.locator('[aria-busy="false"]')).getByRole('radio', { name }).first().check();
    }

    const grantsOf = async () =>
      (await api(`/admin/grants?engagement_id=${engagementId}&include_inactive=true`)).body as any[];

    /**
     * Every request a vendor key's own page can make for this engagement (its lists, each
     * bundle it may open, each image in them): what the page asks, and has refused, when the
     * key is revoked under it.
     */
    async function ownPageRequests(id: number): Promise<string[]> {
      const view = (await api(`/admin/engagements/${id}/view`)).body;
      const urls = [
        `${base}/api/v1/bundles?limit=200`,
        `${base}/api/v1/turnovers`,
        `${base}/api/v1/submissions?limit=200`,
      ];
      for (const b of view.bundles as Array<{ kind: string; node_id: number }>) {
        urls.push(`${base}/api/v1/bundles/${b.kind}/${b.node_id}`);
        const bundle = (await api(`/admin/engagements/${id}/view/bundles/${b.kind}/${b.node_id}`)).body;
        for (const m of mediaIds(bundle)) urls.push(`${base}/api/v1/media/${m}/content`);
      }
      return urls;
    }

    /** The page may be refused, or cancel, any of these: nothing else. */
    function refusedUnder(expected: Expected, urls: string[]) {
      for (const url of urls) {
        expected.refusals.add(`401 ${url}`);
        expected.aborts.push(url);
      }
    }

    it('an admin key signs in and browses: overview, scenes with images, assets, approvals, deliveries', async () => {
      const { page } = await tab('admin browsing', [longPoll(), image()]);
      await signIn(page, admin);
      await heading(page, 'Overview');
      assert.deepEqual(await sections(page), [...BROWSE, ...MANAGE], 'read and admin: both');
      await live(page);
      await page.getByText('Nightfall').first().waitFor();
      await settled(page);
      await checked(page, 'overview');

      await go(page, 'Scenes');
      await heading(page, 'Scenes');
      await page.locator('table tbody tr').first().waitFor();
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
      await settled(page);
      await checked(page, 'assets');

      await go(page, 'Approvals');
      await heading(page, 'Approvals');
      await page.locator('table tbody tr').first().waitFor();
      await settled(page);
      await checked(page, 'approvals');
      await go(page, 'Deliveries');
      await heading(page, 'Deliveries');
      await page.locator('table tbody tr').first().waitFor();
      await settled(page);
      await checked(page, 'deliveries');

      // the overview follows the change feed: a write elsewhere shows up without a reload
      await go(page, 'Overview');
      await heading(page, 'Overview');
      await live(page);
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
      await settled(page);
      await page.close();
    });

    it('a production-wide read key browses with no management anywhere; an admin-only key manages without browsing', async () => {
      const { page } = await tab('scopes', [longPoll(), image()]);
      const reader = await env.mint({ production: 'nightfall', scopes: ['read'], label: 'reader' });
      await signIn(page, reader);
      await heading(page, 'Overview');
      assert.deepEqual(await sections(page), BROWSE, 'read: the browse pages only');
      await live(page);
      await page.locator('ol.activity li').first().waitFor();
      await settled(page);
      await checked(page, 'read-key-overview');
      for (const section of BROWSE.slice(1)) {
        await go(page, section);
        await heading(page, section);
        await page.locator('table tbody tr').first().waitFor();
        await settled(page);
        assert.equal(await page.getByRole('button', { name: MANAGEMENT }).count(), 0, section);
      }
      for (const path of ['vendors', 'vendors/1', 'vendors/1/view', 'webhooks', 'webhooks/1']) {
        await page.goto(`${base}/console#/${path}`);
        await heading(page, 'No such page');
        assert.equal(await page.getByRole('button', { name: MANAGEMENT }).count(), 0, path);
      }
      await signOut(page);

      const manager = await env.mint({ production: 'nightfall', scopes: ['admin'], label: 'access desk' });
      await signIn(page, manager);
      await heading(page, 'Vendors');
      assert.deepEqual(await sections(page), MANAGE, 'admin alone: the management pages only');
      await page.locator('table tbody tr').first().waitFor();
      await page.getByRole('option', { name: /Northlight Post/ }).waitFor({ state: 'attached' });
      await page.getByRole('button', { name: 'Engage' }).waitFor();
      await settled(page);
      // the department list needs `read`: the form engages without it
      assert.equal(await page.getByRole('group', { name: /Departments it works for/ }).count(), 0);
      await checked(page, 'admin-key-vendors');
      await go(page, 'Webhooks');
      await heading(page, 'Webhooks');
      await page.getByRole('button', { name: 'Add webhook' }).waitFor();
      await page.getByText('No webhook yet.').waitFor();
      for (const path of ['overview', 'scenes', 'assets', 'approvals', 'deliveries']) {
        await page.goto(`${base}/console#/${path}`);
        await heading(page, 'No such page');
      }
      await page.close();
    });

    it('engages a vendor, grants it a scene, sees as the vendor with its images, revokes and sees it gone', async () => {
      // the coordinator's tab stays open for the tests after this one
      cp = (await tab('coordinator', [longPoll(), viewImage()])).page;
      const page = cp;
      await signIn(page, admin);
      await heading(page, 'Overview');
      await live(page);
      await settled(page);
      await go(page, 'Vendors');
      await heading(page, 'Vendors');
      await page.getByLabel('Organisation').selectOption({ label: 'Northlight Post' });
      // suggested from the organisation ("org-northlight"), its prefix not doubled
      assert.equal(await page.getByLabel('Reference').inputValue(), 'eng-northlight');
      await page.getByRole('checkbox', { name: 'Visual Effects' }).check();
      await page.locator('table tbody tr').first().waitFor();
      await settled(page);
      await checked(page, 'vendors');
      await page.getByRole('button', { name: 'Engage' }).click();
      await heading(page, /Northlight Post/);
      engagementId = Number(/#\/vendors\/(\d+)/.exec(page.url())![1]);

      // every scene is offered before any search narrows them (the demo has 13), each with its episode
      const scenes = (
        await env.handle.db
          .selectFrom('nodes as n')
          .innerJoin('productions as p', 'p.id', 'n.production_id')
          .where('p.code', '=', 'nightfall')
          .where('n.kind', '=', 'scene')
          .select('n.id')
          .execute()
      ).length;
      assert.ok(scenes > 12, `the demo series has more scenes than the old picker showed: ${scenes}`);
      const offered = page.getByRole('group', { name: 'Matching scenes' });
      await offered.getByText(`${scenes} scenes, all listed.`).waitFor();
      assert.equal(await offered.getByRole('radio').count(), scenes);
      await offered
        .getByRole('radio', { name: new RegExp(`^Scene 1 \\(episode 101\\): ${SCENE} `) })
        .waitFor();

      // grant a scene found by its slugline: listed with its episode
      await pickTarget(page, 'scene', 'ward 9', new RegExp(SCENE));
      await page.getByRole('button', { name: 'Grant', exact: true }).click();
      await page.getByRole('row', { name: new RegExp(`Scene: 1 ${SCENE} \\(episode 101\\)`) }).waitFor();
      await page.getByText('No key yet.').waitFor();
      await page.getByText(/ · 1 live grant · /).waitFor();
      await settled(page);
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
      await until('every image to arrive and decode', async () => {
        // an image is fetched once it is scrolled into view
        const waiting = scene.locator('.thumb-wait');
        if ((await waiting.count()) > 0) {
          await waiting
            .first()
            .scrollIntoViewIfNeeded({ timeout: 1000 })
            .catch(() => undefined);
          return false;
        }
        return scene
          .locator('img')
          .evaluateAll((imgs: any[]) => imgs.every((i) => i.complete && i.naturalWidth > 0));
      });
      await settled(page);
      await checked(page, 'see-as-vendor');

      // revoke it in the other pane, refresh the view: gone
      await page.getByRole('link', { name: /Grants and keys/ }).click();
      await heading(page, /Northlight Post/);
      await settled(page);
      const row = page.getByRole('row', { name: new RegExp(`Scene: .*${SCENE}`) });
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Yes, revoke' }).click();
      await row.getByText(/^Revoked/).waitFor();
      await page.getByText(/ · 0 live grants · /).waitFor();
      await settled(page);
      await page.getByRole('link', { name: 'See as vendor' }).click();
      await heading(page, /See as Northlight Post/);
      await page.getByText('No scene is granted.').waitFor();
      await settled(page);
      assert.equal(await page.locator('details', { hasText: SCENE }).count(), 0);
      await checked(page, 'see-as-vendor-revoked');
    });

    it('mints a key shown once, never again, that works against the API', async () => {
      const page = cp;
      await showEngagement(page);
      // grant the scene again, so the key has something to see
      await pickTarget(page, 'scene', 'ward 9', new RegExp(SCENE));
      await page.getByRole('button', { name: 'Grant', exact: true }).click();
      await page.getByRole('row', { name: /Scene: .*Live/ }).waitFor();
      await page.getByText(/ · 1 live grant · /).waitFor();

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
      await page.getByText(/ · 1 key · /).waitFor();
      await settled(page);
      assert.ok(!(await page.content()).includes(minted), 'the token is gone from the page');
      await page.reload();
      await page.getByRole('row', { name: /Northlight pipeline/ }).waitFor();
      await settled(page);
      assert.ok(!(await page.content()).includes(minted), 'and never shown again');
      assert.ok((await page.content()).includes(minted.slice(0, 12)), 'its prefix is listed');

      const bundles = await api('/bundles', minted);
      assert.equal(bundles.status, 200);
      assert.deepEqual(
        (bundles.body as any[]).map((b) => b.slugline),
        [SCENE],
      );
      const refused = await api('/production', minted);
      assert.equal(refused.status, 403, 'a vendor key stays on the round-trip surface');
    });

    it('at 390 px wide (a phone) no page is wider than the screen: wide tables scroll inside their own box', async () => {
      const page = cp;
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        const wider: string[] = [];
        const measure = async (name: string) => {
          await settled(page);
          const width = await page.evaluate<number>('document.documentElement.scrollWidth');
          // what sticks out, to say where the fault is
          const culprits = await page.evaluate<string[]>(
            `[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > 391 && !e.closest('.table-scroll > table')).slice(0, 4).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`,
          );
          if (width > 390) wider.push(`${name}: ${width} px (${culprits.join('; ')})`);
          await checked(page, `narrow-${name}`);
        };
        await go(page, 'Deliveries');
        await heading(page, 'Deliveries');
        await page.locator('table tbody tr').first().waitFor();
        await measure('deliveries');
        // the table is wider than the phone: it scrolls sideways in its box, the page does not
        const box = page.getByRole('region', { name: 'Deliveries, page 1' });
        assert.ok(
          await box.evaluate((b: any) => b.scrollWidth > b.clientWidth),
          'the deliveries table scrolls inside its box',
        );
        await showEngagement(page);
        await page.getByRole('row', { name: /Northlight pipeline/ }).waitFor();
        await measure('engagement-keys');
        for (const section of ['Overview', 'Scenes', 'Assets', 'Approvals', 'Vendors', 'Webhooks']) {
          await go(page, section);
          await heading(page, section);
          if (section === 'Overview') await live(page);
          await measure(section.toLowerCase());
        }
        assert.deepEqual(wider, [], 'pages wider than a 390 px screen');
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    });

    it('grants a character until a date, a delivery to read and one to submit on; sees them as the vendor; an expired grant shows as such', async () => {
      const page = cp;
      await showEngagement(page);
      await page.getByLabel('What to grant').selectOption('character');
      await pickTarget(page, 'character', 'mara', new RegExp(CHARACTER));
      await page.getByLabel('Expires (optional)').fill('2031-06-01T12:00');
      await page.getByRole('button', { name: 'Grant', exact: true }).click();
      const character = page.getByRole('row', { name: new RegExp(`Character: ${CHARACTER}`) });
      await character.getByText(/^Live until .*2031/).waitFor();
      const granted = (await grantsOf()).find((g) => g.kind === 'character');
      assert.equal(granted.expires_at, new Date('2031-06-01T12:00').toISOString(), 'the local time, in UTC');

      await page.getByLabel('What to grant').selectOption('delivery');
      // an internal delivery (art → vfx: "Long Corridor LiDAR and HDRIs") is never offered to a vendor
      const deliveries = page.getByRole('group', { name: 'Matching deliveries' });
      await deliveries.getByRole('radio').first().waitFor();
      await settled(page);
      await page.getByLabel('Find the delivery').fill('corridor');
      await deliveries.getByText('Nothing matches “corridor”.').waitFor();
      await page.getByLabel('Find the delivery').fill('');
      await pickTarget(page, 'delivery', 'comps', new RegExp(READ_DELIVERY));
      assert.equal(await page.getByLabel('Access').inputValue(), 'read');
      await page.getByRole('button', { name: 'Grant', exact: true }).click();
      const readRow = page.getByRole('row', { name: new RegExp(`Delivery: ${READ_DELIVERY} \\(read\\)`) });
      await readRow.getByText(/^Live$/).waitFor();

      await pickTarget(page, 'delivery', '102 plates', new RegExp(SUBMIT_DELIVERY));
      await page.getByLabel('Access').selectOption('submit');
      await page.getByRole('button', { name: 'Grant', exact: true }).click();
      await page
        .getByRole('row', { name: new RegExp(`Delivery: ${SUBMIT_DELIVERY} \\(read and submit\\)`) })
        .getByText(/^Live$/)
        .waitFor();
      await page.getByText(/ · 4 live grants · /).waitFor();
      await settled(page);
      await checked(page, 'engagement-grants');

      await page.getByRole('link', { name: 'See as vendor' }).click();
      await heading(page, /See as Northlight Post/);
      const mara = characterIn(page);
      await mara
        .locator('summary')
        .getByText(/granted until .*2031/)
        .waitFor();
      await imagesOf(mara);
      const turnovers = page.getByRole('table', { name: 'Turnovers' });
      await turnovers
        .getByRole('row', { name: new RegExp(READ_DELIVERY) })
        .getByRole('cell', { name: 'No (read only)' })
        .waitFor();
      await turnovers
        .getByRole('row', { name: new RegExp(SUBMIT_DELIVERY) })
        .getByRole('cell', { name: 'Yes (submit grant)' })
        .waitFor();
      await page.getByRole('heading', { name: 'Its submissions (0)' }).waitFor();

      // the vendor submits work with its key; the view shows it on the next refresh
      const delivery = await env.handle.db
        .selectFrom('deliveries')
        .where('title', '=', SUBMIT_DELIVERY)
        .select('id')
        .executeTakeFirstOrThrow();
      const form = new FormData();
      form.append('title', SUBMISSION);
      form.append('files', new Blob(['plates, first pass\n'], { type: 'text/plain' }), 'plates.txt');
      const submitted = await fetch(`${base}/api/v1/turnovers/${delivery.id}/submissions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${minted}` },
        body: form,
      });
      assert.equal(submitted.status, 200, await submitted.text());
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByRole('heading', { name: 'Its submissions (1)' }).waitFor();
      await ownSubmissions(page).getByText(SUBMISSION).waitFor();
      await imagesOf(mara);
      await settled(page);
      await checked(page, 'see-as-vendor-grants');

      // time passes: the read grant's expiry comes (set in the database: the API takes only a
      // future expiry; and, as every change through the API does, the production's revision
      // moves, so kept door rows are read again — test/answer-cache.test.ts lets real time pass)
      const read = (await grantsOf()).find((g) => g.kind === 'delivery' && g.access === 'read');
      await env.handle.db
        .updateTable('grants')
        .set({ expires_at: new Date(Date.now() - 60_000).toISOString() })
        .where('id', '=', read.id)
        .execute();
      await env.handle.db
        .updateTable('productions')
        .set((eb) => ({ revision: eb('revision', '+', 1) }))
        .execute();
      await showEngagement(page);
      await readRow.getByText(/^Expired /).waitFor();
      await page.getByText(/ · 3 live grants · /).waitFor();
      assert.match(String(await readRow.getAttribute('class')), /inactive/);
      assert.equal(await readRow.getByRole('button', { name: 'Revoke' }).count(), 1, 'still revocable');
      await checked(page, 'grant-expired');
      await page.getByRole('link', { name: 'See as vendor' }).click();
      await heading(page, /See as Northlight Post/);
      await page.getByRole('heading', { name: 'Turnovers (1)' }).waitFor();
      assert.equal(await page.getByRole('row', { name: new RegExp(READ_DELIVERY) }).count(), 0);
      await settled(page);
    });

    it('adds a webhook (secret shown once), sees a delivery in its log after a write, pauses, resumes and removes it', async () => {
      const page = cp;
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
          const refresh = page.getByRole('button', { name: 'Refresh' });
          await refresh.click();
          await refresh.and(page.locator(':enabled')).waitFor();
          return false;
        },
        15_000,
      );
      await settled(page);
      await checked(page, 'webhook-log');

      const hook = async () =>
        ((await api('/admin/webhooks')).body as any[]).find((w) => w.url === receiver.url);
      await page.getByRole('link', { name: '← All webhooks' }).click();
      await heading(page, 'Webhooks');
      await settled(page);
      const row = page.getByRole('row', { name: new RegExp(escape(receiver.url)) });
      await page.getByRole('button', { name: `Pause ${receiver.url}` }).click();
      await row.getByRole('cell', { name: 'Paused' }).waitFor();
      assert.equal((await hook()).active, false);
      await checked(page, 'webhook-paused');
      await page.getByRole('button', { name: `Resume ${receiver.url}` }).click();
      await row.getByRole('cell', { name: 'Delivering' }).waitFor();
      assert.equal((await hook()).active, true);
      await row.getByRole('button', { name: 'Remove' }).click();
      await row.getByRole('button', { name: 'Yes, remove' }).click();
      await page.getByText('No webhook yet.').waitFor();
      assert.equal(await hook(), undefined);
    });

    it('the audit page says who did what: filtered to webhooks it lists the add, pause, resume and removal', async () => {
      const page = cp;
      await go(page, 'Audit');
      await heading(page, 'Audit trail');
      await page.getByRole('cell', { name: 'webhook.remove' }).waitFor();
      await page.getByLabel('What').selectOption('webhook');
      await until(
        'only webhook rows',
        async () => {
          const actions = await page.locator('table tbody tr td:nth-child(3)').allInnerTexts();
          return actions.length === 4 && actions.every((a) => a.startsWith('webhook.'));
        },
        15_000,
      );
      const actions = await page.locator('table tbody tr td:nth-child(3)').allInnerTexts();
      assert.deepEqual(actions, ['webhook.remove', 'webhook.resume', 'webhook.pause', 'webhook.create']);
      await settled(page);
      await checked(page, 'audit-webhooks');
      const rows = (await api('/admin/audit?action=webhook')).body as any[];
      assert.deepEqual(
        rows.map((r) => r.action),
        actions,
        'the page shows what the API answers',
      );
    });

    it('a vendor key sees only its own view, its submissions with it; sign out leaves nothing in storage', async () => {
      assert.ok(minted, 'the key minted above');
      const { page } = await tab('vendor key', [image()]);
      await signIn(page, minted);
      await heading(page, /What Northlight Post sees/);
      const scene = page.locator('details', { hasText: SCENE });
      await scene.locator('img').first().waitFor();
      await page.getByRole('heading', { name: 'Its submissions (1)' }).waitFor();
      await ownSubmissions(page).getByText(SUBMISSION).waitFor();
      await page
        .getByRole('row', { name: new RegExp(SUBMIT_DELIVERY) })
        .getByRole('cell', { name: 'Yes (submit grant)' })
        .waitFor();
      await characterIn(page).locator('article').waitFor();
      await settled(page);
      assert.equal(await nav(page).count(), 0, 'one page only');
      assert.equal(await page.getByRole('link', { name: 'Vendors' }).count(), 0);
      await checked(page, 'vendor-home');
      await page.goto(`${base}/console#/vendors`);
      await heading(page, 'No such page');

      const stored = await storedEverywhere(browser, page);
      assert.equal(stored.session.length, 1, 'the key is in this tab’s sessionStorage while signed in');
      assert.deepEqual([stored.local, stored.cookies, stored.idb, stored.caches], [[], [], [], []]);

      await signOut(page);
      const after = await storedEverywhere(browser, page);
      assert.deepEqual(
        [after.session, after.local, after.cookies, after.idb, after.caches],
        [[], [], [], [], []],
      );
      assert.ok(!(await page.content()).includes(minted));
      assert.ok(!page.url().includes(minted));
      await page.reload();
      await page.getByLabel('API key').waitFor();
      await page.close();
    });

    it('an API refusal is shown in the server’s words, never a blank page; a key revoked on its engagement’s page signs the vendor’s page out', async () => {
      const { page, expected } = await tab('refusals');
      expected.refusals.add(`401 ${base}/api/v1/key`);
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
      refusedUnder(expected, await ownPageRequests(engagementId));

      await showEngagement(cp);
      const key = cp.getByRole('row', { name: /Northlight pipeline/ });
      await key.getByRole('button', { name: 'Revoke' }).click();
      await key.getByRole('button', { name: 'Yes, revoke' }).click();
      await key.getByText(/^Revoked/).waitFor();
      await cp.getByText(/ · 0 keys · /).waitFor();
      await settled(cp);
      await checked(cp, 'key-revoked');
      assert.equal((await api('/bundles', minted)).status, 401);

      await page.getByRole('button', { name: 'Refresh' }).click();
      await page
        .getByRole('alert')
        .getByText(/revoked/)
        .waitFor();
      await page.getByLabel('API key').waitFor();
      assert.deepEqual((await storedEverywhere(browser, page)).session, []);
      await page.close();
    });

    it('a key revoked at any moment, even with requests in flight, returns the page to signing in, saying why', async () => {
      const pixel = await env.handle.db
        .selectFrom('engagements')
        .where('ref', '=', 'eng-pixel')
        .select('id')
        .executeTakeFirstOrThrow();
      const requests = await ownPageRequests(pixel.id);
      for (const delay of [0, 30, 60, 90, 120]) {
        const { page, expected } = await tab(`revoked in flight after ${delay} ms`);
        refusedUnder(expected, requests);
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
        // signed out already by a request in flight, or by the next one: Refresh is pressed
        // whenever it is enabled until the page says why (a click can miss on a loaded machine,
        // and the page may sign out between the look and the click)
        const told = page.getByRole('alert').getByText('unknown or revoked API key');
        const refresh = page.getByRole('button', { name: 'Refresh', disabled: false });
        await until(
          'the page signed out, in the server’s words',
          async () => {
            if (await told.isVisible()) return true;
            if (await refresh.isVisible()) await refresh.click({ timeout: 1000 }).catch(() => undefined);
            return false;
          },
          30_000,
        ).catch(async (err: Error) => {
          const alerts = await page.getByRole('alert').allTextContents();
          throw new Error(`${err.message} (delay ${delay} ms; alerts shown: ${JSON.stringify(alerts)})`);
        });
        await page.close();
      }
    });

    it('archives the engagement on its page: its keys reach nothing from the next request', async () => {
      const key = await env.mint({ production: 'nightfall', engagement: 'eng-northlight', scopes: ['read'] });
      const scene = await env.handle.db
        .selectFrom('nodes')
        .where('slugline', '=', SCENE)
        .select('id')
        .executeTakeFirstOrThrow();
      assert.equal((await api(`/bundles/scene/${scene.id}`, key)).status, 200);

      const page = cp;
      await showEngagement(page);
      await page.getByText(/ · 1 key · /).waitFor();
      await page.getByRole('button', { name: 'Archive', exact: true }).click();
      await page.getByRole('button', { name: 'Yes, archive' }).click();
      await page.getByText(/^Archived .*its keys reach nothing/).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Grant', exact: true }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Mint key' }).count(), 0);
      await checked(page, 'engagement-archived');
      await page.getByRole('link', { name: 'See as vendor' }).click();
      await heading(page, /See as Northlight Post/);
      await page.getByText(/This engagement is archived/).waitFor();
      await page.getByText('No scene is granted.').waitFor();
      await settled(page);

      const bundle = await api(`/bundles/scene/${scene.id}`, key);
      assert.equal(bundle.status, 404, 'refused as if the scene did not exist');
      assert.deepEqual((await api('/bundles', key)).body, []);
      assert.deepEqual((await api('/turnovers', key)).body, []);
      assert.deepEqual((await api('/submissions', key)).body, []);

      await go(page, 'Vendors');
      await heading(page, 'Vendors');
      await page.locator('table tbody tr').first().waitFor();
      assert.equal(await page.getByRole('link', { name: 'eng-northlight' }).count(), 0);
      await page.getByLabel('Show archived engagements').check();
      await page
        .getByRole('row', { name: /eng-northlight/ })
        .getByRole('cell', { name: /^Archived / })
        .waitFor();
      await settled(page);
      await page.close();
    });

    it('no console errors, no failed or refused requests but those provoked, nothing off 127.0.0.1, no serious accessibility violation', () => {
      assert.ok(faults.length >= 10);
      for (const [name, f] of faults) {
        assert.deepEqual(f.consoleErrors, [], `${name}: console errors`);
        assert.deepEqual(f.pageErrors, [], `${name}: page errors`);
        assert.deepEqual(f.failedRequests, [], `${name}: failed requests`);
        assert.deepEqual(f.refused, [], `${name}: refused requests`);
        assert.deepEqual(f.offHost, [], `${name}: requests off 127.0.0.1`);
      }
      assert.deepEqual(a11y, []);
      assert.ok(shots.taken.length >= 22, `screenshots: ${shots.taken.join(', ')}`);
    });
  });
}
