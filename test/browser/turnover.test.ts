import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { buildApp, type App } from '../../src/app.js';
import { createEnv, DIALECTS, type TestEnv } from '../support/env.js';
import { loadDemo } from '../support/read.js';
import { until } from '../support/receiver.js';
import { axe, expecting, launch, shooter, watch, type Faults } from './browser.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/*
 * The turnover both ways, in a real Chromium against a real server, on SQLite and PostgreSQL:
 * a coordinator engages a new organisation, grants it a delivery to submit on, uploads the
 * package (with its progress) and sends it; the vendor's own console gets the plates and
 * submits; the coordinator previews it and asks for changes; the vendor reads the review and
 * submits again; the coordinator accepts, and the delivery with it.
 */

const ORG = 'Brand New VFX Co';
const DELIVERY = 'Episode 101 comps, 3 a.m. light shift';
const NOTE = 'Edge matte chatters on frames 1012-1020; hold the sodium flicker.';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A plate-like image: a gradient, so a thumbnail shows something. */
const image = (width: number, height: number, colour: string) =>
  sharp({ create: { width, height, channels: 3, background: colour } })
    .composite([
      {
        input: Buffer.from(
          `<svg width="${width}" height="${height}"><rect x="${width / 4}" y="${height / 4}" width="${width / 2}" height="${height / 2}" fill="#f2c14e"/></svg>`,
        ),
      },
    ])
    .jpeg()
    .toBuffer();

for (const dialect of DIALECTS) {
  describe(`the turnover round trip in Chromium [${dialect}]`, () => {
    let env: TestEnv;
    let app: App;
    let base: string;
    let browser: BrowserContext;
    let profile: string;
    let admin: string;
    let vendorKey = '';
    let deliveryId = 0;
    const shots = shooter(join('turnover', dialect));
    const faults: Array<[string, Faults]> = [];
    const a11y: string[] = [];
    let cp: Page;
    let vp: Page;
    let coordinator: Faults;
    const files: Record<'plate' | 'edl' | 'scan' | 'comp1', Buffer> = {
      plate: Buffer.alloc(0),
      edl: Buffer.alloc(0),
      scan: Buffer.alloc(0),
      comp1: Buffer.alloc(0),
    };

    before(async () => {
      env = await createEnv(dialect);
      await loadDemo(env, 'episodic');
      admin = await env.mint({ production: 'nightfall', scopes: ['read', 'admin'], label: 'coordinator' });
      app = await buildApp({ config: env.config, database: env.handle, store: env.store, logger: false });
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      profile = await mkdtemp(join(tmpdir(), 'prodgraph-chromium-'));
      browser = await launch(profile);
      files.plate = await image(1920, 1080, '#1f3a5f');
      files.edl = Buffer.from(
        'TITLE: EP101 COMPS\nFCM: NON-DROP FRAME\n001  A001C003 V C 01:00:00:00 01:00:04:00\n',
      );
      // an EXR stand-in of 3 MB: big enough that its upload's progress can be seen on a slowed link
      files.scan = randomBytes(3 * 1024 * 1024);
      files.comp1 = await image(1280, 720, '#6b2d5c');
    });

    after(async () => {
      await browser?.close();
      await rm(profile, { recursive: true, force: true });
      await app?.close();
      await env?.close();
    });

    const image$ = () => new RegExp(`^${escape(base)}/api/v1/media/\\d+/content$`);
    const longPoll = () => new RegExp(`^${escape(base)}/api/v1/changes\\?after=[^&]+&wait=25$`);

    async function tab(name: string) {
      const page = await browser.newPage();
      const seen = watch(page, expecting([longPoll(), image$()]));
      faults.push([name, seen]);
      return { page, seen };
    }

    async function checked(page: Page, name: string) {
      await settled(page);
      await shots.shot(page, name);
      for (const v of await axe(page))
        a11y.push(
          `${name}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
        );
    }

    const settled = (page: Page) =>
      page
        .locator('.busy, [aria-busy="true"], button:disabled:text-matches("^Refresh")')
        .first()
        .waitFor({ state: 'detached' });
    /** The overview once its feed is live: only its long poll is left running, which leaving cancels. */
    const live = (page: Page) => page.locator('[class="live live"]').waitFor();
    const heading = (page: Page, name: string | RegExp) =>
      page.getByRole('heading', { level: 1, name }).waitFor();

    async function signIn(page: Page, key: string) {
      await page.goto(`${base}/console`);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }

    const api = async (path: string, key = admin) => {
      const r = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: r.status, body: (await r.json()) as any };
    };
    const deliveryRow = async () =>
      ((await api('/deliveries')).body as any[]).find((d) => d.title === DELIVERY);

    /** The delivery's page, its answers fresh. */
    async function showDelivery(page: Page) {
      // the tab in front: a tab behind another renders nothing, so its images never come into view
      await page.bringToFront();
      const url = `${base}/console#/deliveries/${deliveryId}`;
      if (page.url() === url) await page.reload();
      else await page.goto(url);
      await heading(page, DELIVERY);
      await settled(page);
    }

    /** Scrolls every thumbnail of a part of the page into view, and waits for each image. */
    async function imagesIn(page: Page, scope: ReturnType<Page['locator']>) {
      await until('every thumbnail to load', async () => {
        const waiting = scope.locator('.thumb-wait');
        if ((await waiting.count()) === 0) return true;
        await waiting
          .first()
          .scrollIntoViewIfNeeded({ timeout: 1000 })
          .catch(() => undefined);
        return false;
      });
    }

    const turnover = (page: Page) =>
      page.locator('details.turnover', { has: page.locator('summary', { hasText: DELIVERY }) });

    it('engages a new organisation from the engage form, grants it a delivery to submit on and mints its key', async () => {
      ({ page: cp, seen: coordinator } = await tab('coordinator'));
      await signIn(cp, admin);
      await heading(cp, 'Overview');
      await live(cp);
      await cp.goto(`${base}/console#/vendors`);
      await heading(cp, 'Vendors');
      await cp.locator('table tbody tr').first().waitFor();
      await cp.getByLabel('Organisation').selectOption({ label: 'A new organisation…' });
      await cp.getByLabel('New organisation’s name').fill(ORG);
      assert.equal(await cp.getByLabel('Reference').inputValue(), 'eng-brand-new-vfx-co');
      await cp.getByRole('checkbox', { name: 'Visual Effects' }).check();
      await checked(cp, 'engage-new-organisation');
      await cp.getByRole('button', { name: 'Engage' }).click();
      await heading(cp, new RegExp(`${ORG} · eng-brand-new-vfx-co`));
      const orgs = (await api('/admin/organisations')).body as any[];
      assert.equal(orgs.filter((o) => o.name === ORG).length, 1, 'made once');

      await cp.getByLabel('What to grant').selectOption('delivery');
      const offered = cp.getByRole('group', { name: 'Matching deliveries' });
      await offered.getByRole('radio').first().waitFor();
      await settled(cp);
      await cp.getByLabel('Find the delivery').fill('3 a.m.');
      await offered
        .and(cp.locator('[aria-busy="false"]'))
        .getByRole('radio', { name: new RegExp(escape(DELIVERY)) })
        .check();
      await cp.getByLabel('Access').selectOption('submit');
      await cp.getByRole('button', { name: 'Grant', exact: true }).click();
      await cp
        .getByRole('row', { name: new RegExp(`Delivery: ${escape(DELIVERY)} \\(read and submit\\)`) })
        .waitFor();

      await cp.getByLabel('Label').fill('Brand New VFX pipeline');
      await cp.getByRole('button', { name: 'Mint key' }).click();
      vendorKey = (await cp.locator('[data-secret]').innerText()).trim();
      assert.match(vendorKey, /^pgk_/);
      await cp.getByRole('button', { name: 'I have stored it' }).click();
      await cp.getByRole('row', { name: /Brand New VFX pipeline/ }).waitFor();
      await checked(cp, 'engagement-granted');
      deliveryId = (await deliveryRow()).id;
    });

    it('uploads the package with its progress (and a cancelled upload stores nothing), removes a file, and sends it', async () => {
      await cp.goto(`${base}/console#/deliveries`);
      await heading(cp, 'Deliveries');
      await cp.getByRole('link', { name: DELIVERY }).click();
      await heading(cp, DELIVERY);
      await settled(cp);
      await cp.getByText('No file in the package yet.').waitFor();
      await cp
        .getByRole('group', { name: 'Next steps' })
        .getByRole('button', { name: 'Send to the vendor' })
        .waitFor();
      // the demo's Pixelworks holds a grant on it too
      await cp.getByRole('heading', { name: 'Granted to (2 live)' }).waitFor();
      await cp
        .getByRole('listitem')
        .filter({ hasText: `${ORG} (eng-brand-new-vfx-co): read and submit · live` })
        .getByRole('link')
        .waitFor();
      await checked(cp, 'delivery-ready');

      // a slowed link, so the progress can be seen: ~1.5 MB/s up
      const cdp = await cp.context().newCDPSession(cp);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 20,
        downloadThroughput: -1,
        uploadThroughput: 1_500_000,
      });
      const chooser = cp.getByLabel('Files', { exact: true });
      await chooser.setInputFiles([
        { name: 'sh010_plate.jpg', mimeType: 'image/jpeg', buffer: files.plate },
        { name: 'ep101_comps.edl', mimeType: 'text/plain', buffer: files.edl },
        { name: 'sh010_scan.exr', mimeType: 'application/octet-stream', buffer: files.scan },
      ]);
      await cp.getByLabel('Label of sh010_plate.jpg (', { exact: false }).fill('sh010_plate_v001.jpg');

      // the first upload is cancelled midway: nothing is stored
      await cp.getByRole('button', { name: 'Upload', exact: true }).click();
      const status = cp.getByRole('status').filter({ hasText: /\d+%:/ });
      await until('the upload to be partly sent', async () => {
        const text = (await status.textContent().catch(() => null)) ?? '';
        const m = /^(\d+)%/.exec(text);
        return m !== null && Number(m[1]) > 0 && Number(m[1]) < 100;
      });
      await cp.getByRole('button', { name: 'Cancel upload' }).click();
      await cp.getByText('Upload cancelled: nothing was stored.').waitFor();
      // the one request the page cancels on purpose: excused exactly once
      const cancelled = `POST ${base}/api/v1/admin/deliveries/${deliveryId}/files net::ERR_ABORTED`;
      await until('the cancelled upload to be seen', () => coordinator.failedRequests.includes(cancelled));
      coordinator.failedRequests.splice(coordinator.failedRequests.indexOf(cancelled), 1);
      assert.deepEqual((await deliveryRow()).package, [], 'a cancelled upload leaves nothing');

      // then sent whole, its progress shown as it goes
      await cp.getByRole('button', { name: 'Upload', exact: true }).click();
      const seen = new Set<number>();
      await until(
        'the progress to pass half way',
        async () => {
          const m = /^(\d+)%/.exec((await status.textContent().catch(() => null)) ?? '');
          if (m) seen.add(Number(m[1]));
          return [...seen].some((p) => p >= 50 && p < 100);
        },
        60_000,
      );
      await shots.shot(cp, 'package-uploading');
      await cp.getByRole('heading', { name: 'Package (3)' }).waitFor({ timeout: 60_000 });
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      await cdp.detach();
      assert.ok(
        [...seen].some((p) => p > 0 && p < 50),
        `progress seen before half way: ${[...seen]}`,
      );

      const row = await deliveryRow();
      assert.deepEqual(
        row.package.map((f: any) => [f.label, f.size, f.sha256]),
        [
          ['sh010_plate_v001.jpg', files.plate.length, sha256(files.plate)],
          ['ep101_comps.edl', files.edl.length, sha256(files.edl)],
          ['sh010_scan.exr', files.scan.length, sha256(files.scan)],
        ],
      );
      assert.equal(row.package[0].kind, 'image');
      await imagesIn(cp, cp.getByRole('region', { name: /^Package of/ }));
      await checked(cp, 'package-uploaded');

      // the scan goes out of the package again
      const scan = cp.getByRole('row', { name: /sh010_scan\.exr/ });
      await scan.getByRole('button', { name: 'Remove' }).click();
      await scan.getByRole('button', { name: 'Yes, remove' }).click();
      await cp.getByRole('heading', { name: 'Package (2)' }).waitFor();

      await cp.getByLabel('Note (optional)').fill('Plates and EDL for the 3 a.m. shift');
      await cp.getByRole('button', { name: 'Send to the vendor' }).click();
      await cp.locator('.badge.status-sent').first().waitFor();
      await cp.getByRole('button', { name: 'Recall (back to ready)' }).waitFor();
      await cp.getByText('The engagements granted on it can fetch these files.').waitFor();
      assert.equal((await deliveryRow()).status, 'sent');
      await checked(cp, 'delivery-sent');
    });

    it('the vendor’s own console gets the plates: thumbnails, previews, downloads checked by SHA-256', async () => {
      vp = (await tab('vendor')).page;
      await signIn(vp, vendorKey);
      await heading(vp, `What ${ORG} sees`);
      const t = turnover(vp);
      await t.getByRole('heading', { name: 'Package (2)' }).waitFor();
      assert.equal(await t.getByRole('row', { name: /sh010_scan/ }).count(), 0, 'a removed file is gone');
      await imagesIn(vp, t);
      const img = t.getByRole('img', { name: 'sh010_plate_v001.jpg' });
      assert.match(String(await img.getAttribute('src')), /^blob:/);

      const [download] = await Promise.all([
        vp.waitForEvent('download'),
        t.getByRole('button', { name: 'Download ep101_comps.edl' }).click(),
      ]);
      assert.equal(download.suggestedFilename(), 'ep101_comps.edl');
      assert.equal(sha256(await readFile(await download.path())), sha256(files.edl));
      const [plate] = await Promise.all([
        vp.waitForEvent('download'),
        t.getByRole('button', { name: 'Download sh010_plate_v001.jpg' }).click(),
      ]);
      assert.equal(sha256(await readFile(await plate.path())), sha256(files.plate));

      await shots.shot(vp, 'vendor-turnover');
      await t.getByRole('button', { name: 'Preview ep101_comps.edl' }).click();
      await vp
        .getByRole('figure', { name: 'Preview of ep101_comps.edl' })
        .getByText('TITLE: EP101 COMPS')
        .waitFor();
      await checked(vp, 'vendor-package');
    });

    it('the vendor submits from its console; the coordinator previews it and asks for changes', async () => {
      const t = turnover(vp);
      await t.getByLabel('Title').fill('Comps v1');
      await t.getByLabel('Note (optional)').fill('First pass on the 3 a.m. shift');
      await t
        .getByLabel('Files', { exact: true })
        .setInputFiles([{ name: 'sh010_comp_v001.jpg', mimeType: 'image/jpeg', buffer: files.comp1 }]);
      await t.getByRole('button', { name: 'Submit', exact: true }).click();
      const v1 = turnover(vp).locator('article', { has: vp.getByRole('heading', { name: 'Comps v1' }) });
      await v1.getByText('Waiting for review').waitFor();
      await imagesIn(vp, turnover(vp));
      await checked(vp, 'vendor-submitted');

      await showDelivery(cp);
      await cp.getByRole('heading', { name: 'Submissions (1)' }).waitFor();
      const card = cp.locator('article', { has: cp.getByRole('heading', { name: 'Comps v1' }) });
      await card.getByText(new RegExp(`From ${ORG} \\(eng-brand-new-vfx-co\\)`)).waitFor();
      await card.getByText('First pass on the 3 a.m. shift').waitFor();
      await imagesIn(cp, card);
      await card.getByRole('button', { name: 'Preview sh010_comp_v001.jpg' }).click();
      const preview = cp.getByRole('figure', { name: 'Preview of sh010_comp_v001.jpg' });
      await preview.getByRole('img', { name: 'sh010_comp_v001.jpg' }).waitFor();
      assert.ok(
        await preview.getByRole('img').evaluate((i: any) => i.complete && i.naturalWidth === 1280),
        'the preview shows the submitted image itself',
      );
      await checked(cp, 'coordinator-preview');

      // changes are asked for in words
      await card.getByRole('button', { name: 'Request changes' }).click();
      await card.getByText('Say what to change: the vendor reads this note.').waitFor();
      await card.getByLabel('Note to the vendor').fill(NOTE);
      await card.getByRole('button', { name: 'Request changes' }).click();
      await card.locator('.review').getByText('Changes requested').waitFor();
      await card.getByText(NOTE).waitFor();
      await checked(cp, 'changes-requested');
    });

    it('the vendor reads the review and submits again; the coordinator accepts it and the delivery with it', async () => {
      await vp.bringToFront();
      await vp.getByRole('button', { name: 'Refresh' }).click();
      const v1 = turnover(vp).locator('article', { has: vp.getByRole('heading', { name: 'Comps v1' }) });
      await v1.locator('.review').getByText('Changes requested').waitFor();
      await v1.getByText(NOTE).waitFor();
      await checked(vp, 'vendor-reads-review');

      const t = turnover(vp);
      await t.getByLabel('Title').fill('Comps v2');
      await t
        .getByLabel('Files', { exact: true })
        .setInputFiles([
          { name: 'sh010_comp_v002.jpg', mimeType: 'image/jpeg', buffer: await image(1280, 720, '#2d5c6b') },
        ]);
      await t.getByRole('button', { name: 'Submit', exact: true }).click();
      await turnover(vp)
        .locator('article', { has: vp.getByRole('heading', { name: 'Comps v2' }) })
        .getByText('Waiting for review')
        .waitFor();

      await showDelivery(cp);
      await cp.getByRole('heading', { name: 'Submissions (2)' }).waitFor();
      const titles = await cp.locator('article.submission h3').allInnerTexts();
      assert.deepEqual(titles, ['Comps v2', 'Comps v1'], 'newest first');
      const v2 = cp.locator('article', { has: cp.getByRole('heading', { name: 'Comps v2' }) });
      await v2.getByLabel('Note to the vendor').fill('Approved for the cut.');
      await v2.getByLabel('On accepting, also mark the delivery accepted').check();
      await v2.getByRole('button', { name: 'Accept' }).click();
      await v2.locator('.review').getByText('Accepted').waitFor();
      await cp.locator('.badge.status-accepted').first().waitFor();
      await cp.getByText('Accepted: final.').waitFor();
      assert.equal(await cp.getByRole('group', { name: 'Next steps' }).count(), 0, 'accepted is final');
      const row = await deliveryRow();
      assert.equal(row.status, 'accepted');
      assert.deepEqual(
        row.submissions.map((s: any) => [s.title, s.status, s.review?.decision]),
        [
          ['Comps v1', 'changes_requested', 'changes_requested'],
          ['Comps v2', 'accepted', 'accepted'],
        ],
      );
      await checked(cp, 'accepted');

      await vp.bringToFront();
      await vp.getByRole('button', { name: 'Refresh' }).click();
      const accepted = turnover(vp).locator('article', {
        has: vp.getByRole('heading', { name: 'Comps v2' }),
      });
      await accepted.locator('.review').getByText('Accepted').waitFor();
      await vp
        .getByRole('row', { name: new RegExp(escape(DELIVERY)) })
        .getByRole('cell', { name: 'accepted', exact: true })
        .waitFor();
      const own = (await api('/turnovers', vendorKey)).body as any[];
      assert.deepEqual(
        own.find((x) => x.id === deliveryId).submissions.map((s: any) => [s.title, s.review?.note]),
        [
          ['Comps v1', NOTE],
          ['Comps v2', 'Approved for the cut.'],
        ],
      );
      await checked(vp, 'vendor-accepted');
    });

    it('at 390 px wide the delivery page and the vendor’s console fit the screen', async () => {
      for (const [page, name] of [
        [cp, 'delivery'],
        [vp, 'vendor'],
      ] as const) {
        await page.bringToFront();
        await page.setViewportSize({ width: 390, height: 844 });
        if (page === cp) await showDelivery(page);
        else await page.reload();
        await heading(page, /./);
        await settled(page);
        await imagesIn(page, page.locator('main'));
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(width <= 390, `${name} at 390 px: ${width} px wide`);
        await checked(page, `narrow-${name}`);
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    });

    it('overview cards and asset names link to their pages; an asset page lists its versions', async () => {
      await cp.bringToFront();
      await cp.goto(`${base}/console#/overview`);
      await heading(cp, 'Overview');
      await live(cp);
      await cp.getByRole('link', { name: 'Scenes and assets' }).click();
      await heading(cp, 'Assets');
      await cp.getByRole('link', { name: 'Mara Quinn', exact: true }).click();
      await heading(cp, 'Mara Quinn');
      const versions = cp.getByRole('region', { name: 'Versions of Mara Quinn' });
      await versions.locator('tbody tr').first().waitFor();
      const asset = (await api('/assets?kind=character')).body.find((a: any) => a.label === 'Mara Quinn');
      assert.equal(await versions.locator('tbody tr').count(), asset.versions);
      await imagesIn(cp, cp.locator('main'));
      await checked(cp, 'asset');
      await cp.goto(`${base}/console#/overview`);
      await heading(cp, 'Overview');
      await live(cp);
      await cp.getByRole('link', { name: 'Deliveries in flight' }).click();
      await heading(cp, 'Deliveries');
      await cp.getByRole('link', { name: DELIVERY }).waitFor();
    });

    it('no console errors, no failed or refused requests, nothing off 127.0.0.1, no serious accessibility violation', () => {
      for (const [name, f] of faults) {
        assert.deepEqual(f.consoleErrors, [], `${name}: console errors`);
        assert.deepEqual(f.pageErrors, [], `${name}: page errors`);
        assert.deepEqual(f.failedRequests, [], `${name}: failed requests`);
        assert.deepEqual(f.refused, [], `${name}: refused requests`);
        assert.deepEqual(f.offHost, [], `${name}: requests off 127.0.0.1`);
      }
      assert.deepEqual(a11y, []);
      assert.ok(shots.taken.length >= 16, `screenshots: ${shots.taken.join(', ')}`);
    });
  });
}
