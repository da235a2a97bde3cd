import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/*
 * Debian's Chromium driven by playwright-core: headless, a fresh profile per run, and none of
 * Chromium's own background traffic (on a closed network its connections are refused, which
 * would read as failed requests).
 */
export const CHROMIUM = process.env.PRODGRAPH_CHROMIUM ?? '/usr/bin/chromium';

/** A headless Chromium on a fresh profile folder (its only context: each tab has its own sessionStorage). */
export async function launch(profile: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Everything the page did that a user or an operator would call a fault. */
export interface Faults {
  consoleErrors: string[];
  pageErrors: string[];
  /** Failed requests, a cancelled one included unless the page cancels it on purpose. */
  failedRequests: string[];
  refused: string[];
  offHost: string[];
}

/** What a tab does on purpose that would otherwise be a fault. */
export interface Expected {
  /** Refusals the test provokes, each as `<status> <url>`, exactly. */
  refusals: Set<string>;
  /**
   * Requests the page cancels itself (a long poll or an image of a page left behind, the reads
   * of a page a revoked key signs out of), by URL: exact, or a pattern where the URL carries a
   * cursor.
   */
  aborts: Array<string | RegExp>;
}

export const expecting = (aborts: Array<string | RegExp> = []): Expected => ({ refusals: new Set(), aborts });

/**
 * Watches a page: console errors, uncaught errors, failed and refused requests, anything not on
 * 127.0.0.1 (always: nothing expected excuses a request off the host). `expected` is read as
 * each event arrives, so a test may add to it before it provokes a refusal.
 */
export function watch(page: Page, expected: Expected = expecting()): Faults {
  const f: Faults = { consoleErrors: [], pageErrors: [], failedRequests: [], refused: [], offHost: [] };
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    // Chromium logs every refused request as a console error: a refusal provoked on purpose is expected
    const status = /the server responded with a status of (\d+)/.exec(m.text())?.[1];
    if (status && expected.refusals.has(`${status} ${m.location().url}`)) return;
    f.consoleErrors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => f.pageErrors.push(e.message));
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.protocol === 'blob:' || url.protocol === 'data:') return;
    if (url.hostname !== '127.0.0.1') f.offHost.push(r.url());
  });
  // Chromium may report a request whose answer had already arrived (2xx, headers and a small
  // body) as aborted a moment later, seen once in a few runs for POST /admin/keys (one key
  // minted, its token shown): the answer was had, and whether the page read it is what the
  // tests' own checks see. A request cut before any answer stays a failure.
  const answered = new WeakSet<object>();
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText ?? '';
    const onPurpose =
      why === 'net::ERR_ABORTED' &&
      r.method() === 'GET' &&
      expected.aborts.some((a) => (typeof a === 'string' ? a === r.url() : a.test(r.url())));
    const afterItsAnswer = why === 'net::ERR_ABORTED' && answered.has(r);
    if (!onPurpose && !afterItsAnswer) f.failedRequests.push(`${r.method()} ${r.url()} ${why}`);
  });
  page.on('response', (r) => {
    if (r.ok()) answered.add(r.request());
    if (r.status() >= 400 && !expected.refusals.has(`${r.status()} ${r.url()}`))
      f.refused.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  return f;
}

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core run in the page through the DevTools protocol (the page's CSP forbids injected
 * script tags, as it should): the violations of serious or critical impact.
 */
export async function axe(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${AXE}\n;true`);
  const result = await page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))",
  );
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Screenshots under test-results/console/<dialect>/, numbered in the order taken. */
export function shooter(dialect: string) {
  const dir = join('test-results', 'console', dialect);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let n = 0;
  const taken: string[] = [];
  return {
    taken,
    async shot(page: Page, name: string) {
      const file = join(dir, `${String(++n).padStart(2, '0')}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      taken.push(file);
    },
  };
}

/** What the page keeps anywhere a browser keeps things: web storage, cookies, IndexedDB, caches. */
export async function storedEverywhere(context: BrowserContext, page: Page) {
  const inPage = await page.evaluate<{
    session: string[][];
    local: string[][];
    idb: string[];
    caches: string[];
  }>(
    `(async () => ({
    session: Object.entries(sessionStorage),
    local: Object.entries(localStorage),
    idb: indexedDB.databases ? (await indexedDB.databases()).map((d) => d.name) : [],
    caches: (await caches.keys()),
  }))()`,
  );
  return { ...inPage, cookies: await context.cookies() };
}
