import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { AggregatorRegistry } from 'prom-client';
import { Metrics } from '../src/metrics/registry.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { call, get } from './support/http.js';
import { parseExposition, promtool, promtoolCheck, valueOf, type Sample } from './support/prometheus.js';
import { Receiver, until } from './support/receiver.js';
import { freePort, startServer } from './support/server-process.js';
import { jpeg, upload } from './support/write.js';

const H = 'prodgraph_http_request_duration_seconds_count';
/** Every label any series may carry: fixed names, each with a bounded set of values. */
const LABELS = new Set(['method', 'route', 'status', 'kind', 'outcome', 'state', 'reason', 'webhook', 'le']);
// default process metrics' own labels
const PROCESS_LABELS = new Set(['space', 'kind', 'type', 'version', 'major', 'minor', 'patch', 'le']);

/** Every metric family seen in this file's scrapes, on either database (the dashboard is checked against them). */
const seen = new Set<string>();
/** Exposed only on PostgreSQL (the pool); a dashboard may query them when no PostgreSQL test ran. */
const POSTGRES_ONLY = new Set([
  'prodgraph_db_pool_connections',
  'prodgraph_db_pool_max',
  'prodgraph_commit_listener_up',
]);

async function scrape(env: TestEnv, token: string): Promise<{ text: string; samples: Sample[] }> {
  const r = await env.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.statusCode, 200, r.body);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const { samples, families } = parseExposition(r.body);
  for (const f of families.keys()) seen.add(f);
  return { text: r.body, samples };
}

for (const dialect of DIALECTS) {
  describe(`metrics [${dialect}]`, () => {
    let env: TestEnv;
    let reader: string;
    let writer: string;
    let metricsKey: string;
    let coat: number;

    before(async () => {
      env = await createEnv(dialect, { PRODGRAPH_WEBHOOK_ALLOW: '127.0.0.0/8' });
      coat = (await env.import(smallProduction('metered'))).refs['co-coat']!;
      reader = await env.mint({ production: 'metered', scopes: ['read'] });
      writer = await env.mint({ production: 'metered', label: 'Isla Munro pipeline' });
      metricsKey = await env.mint({ production: 'metered', scopes: ['metrics'] });
    });
    after(() => env.close());

    it('GET /metrics takes a key with the metrics scope, which only the operator mints', async () => {
      assert.equal((await get(env.app, '/metrics')).status, 401);
      const scoped = await get(env.app, '/metrics', reader);
      assert.equal(scoped.status, 403);
      assert.equal(scoped.body.code, 'scope_missing');
      await assert.rejects(
        env.mint({ production: 'metered', engagement: 'eng-pix', scopes: ['metrics'] }),
        /cannot hold the "metrics" scope/,
      );
      const admin = await env.mint({ production: 'metered', scopes: ['admin'] });
      const viaApi = await call(env.app, 'POST', '/api/v1/admin/keys', {
        token: admin,
        body: { label: 'scraper', scopes: ['metrics'] },
      });
      assert.equal(viaApi.status, 422, viaApi.text);
      assert.match(viaApi.body.detail, /^scopes: /);
    });

    it('counts requests by route template, writes, queries, the answer cache, uploads and webhooks, with bounded labels', async () => {
      const receiver = await new Receiver().start();
      receiver.answer = () => 500;
      const admin = await env.mint({ production: 'metered', scopes: ['admin'] });
      const hook = await call(env.app, 'POST', '/api/v1/admin/webhooks', {
        token: admin,
        body: { url: receiver.url, kinds: ['asset'] },
      });
      assert.equal(hook.status, 201, hook.text);
      const before = (await scrape(env, metricsKey)).samples;
      // assembled, then served kept
      for (let i = 0; i < 2; i++)
        assert.equal((await get(env.app, `/api/v1/assets/${coat}`, reader)).status, 200);
      assert.equal((await get(env.app, '/api/v1/assets/999999', reader)).status, 404);
      assert.equal((await get(env.app, `/api/v1/no/such/path/${writer}`, reader)).status, 404);
      const created = await call(env.app, 'POST', '/api/v1/assets', {
        token: writer,
        body: { label: 'metered' },
      });
      assert.equal(created.status, 201);
      const photo = await jpeg(7);
      const landed = await upload(env.app, `/api/v1/assets/${coat}/versions`, {
        token: writer,
        files: [{ name: 'v.jpg', bytes: photo, type: 'image/jpeg' }],
      });
      assert.equal(landed.status, 201, landed.text);
      // the writes dropped the kept answer (a commit retires them at once): kept again
      assert.equal((await get(env.app, `/api/v1/assets/${coat}`, reader)).status, 200);
      // a long-poll held while the metrics are read
      const held = get(env.app, '/api/v1/changes?after=now&wait=2', reader);
      await until('the long-poll to be held', () => env.app.ctx.changes.waiting > 0);
      const { text, samples } = await scrape(env, metricsKey);
      await held;
      const delta = (name: string, labels: Record<string, string> = {}) =>
        (valueOf(samples, name, labels) ?? 0) - (valueOf(before, name, labels) ?? 0);

      const asset = { method: 'GET', route: '/api/v1/assets/:node_id' };
      assert.equal(delta(H, { ...asset, status: '200' }), 3);
      assert.equal(delta(H, { ...asset, status: '404' }), 1);
      assert.equal(delta(H, { method: 'GET', route: '(unmatched)', status: '404' }), 1);
      assert.equal(delta(H, { method: 'POST', route: '/api/v1/assets', status: '201' }), 1);
      assert.ok(delta('prodgraph_writes_committed_total') >= 2, 'writes');
      assert.ok(delta('prodgraph_write_group_size_count') >= 2);
      assert.equal(
        delta('prodgraph_write_group_size_bucket', { le: '1' }),
        delta('prodgraph_write_group_size_count'),
      );
      assert.ok(delta('prodgraph_db_query_duration_seconds_count', { kind: 'select', outcome: 'ok' }) > 0);
      assert.ok(delta('prodgraph_db_query_duration_seconds_count', { kind: 'insert', outcome: 'ok' }) > 0);
      assert.ok(delta('prodgraph_answer_cache_hits_total') >= 1, 'answer cache hits');
      assert.ok(delta('prodgraph_answer_cache_misses_total') >= 1, 'answer cache misses');
      assert.ok(valueOf(samples, 'prodgraph_answer_cache_bytes')! > 0);
      assert.ok(delta('prodgraph_staged_bytes_total') >= photo.length);
      assert.equal(valueOf(samples, 'prodgraph_uploads_in_flight'), 0);
      assert.equal(valueOf(samples, 'prodgraph_staged_bytes'), 0);
      assert.equal(valueOf(samples, 'prodgraph_change_feed_waiters'), 1);
      const webhook = { webhook: String(hook.body.id) };
      // nobody delivers in this app (no worker): the asset changes since it subscribed wait
      const pending = await get(env.app, `/api/v1/changes?after=${hook.body.cursor}`, reader);
      const assetChanges = pending.body.changes.filter((c: { kind: string }) => c.kind === 'asset').length;
      assert.ok(assetChanges >= 1);
      assert.equal(valueOf(samples, 'prodgraph_webhook_backlog', webhook), assetChanges);
      assert.ok(valueOf(samples, 'prodgraph_webhook_oldest_undelivered_seconds', webhook)! >= 0);
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_p99_seconds',
      ])
        assert.ok(valueOf(samples, name) !== undefined, name);
      if (dialect === 'postgres') {
        assert.ok(delta('prodgraph_db_pool_wait_seconds_count', { outcome: 'ok' }) > 0);
        assert.equal(valueOf(samples, 'prodgraph_db_pool_max'), 5);
        assert.ok(valueOf(samples, 'prodgraph_db_pool_connections', { state: 'idle' }) !== undefined);
      }

      // bounded labels: known names only, never a token, key prefix, person or path
      const prefixes = [reader, writer, metricsKey].map((t) => t.slice(0, 12));
      for (const s of samples) {
        const known = s.name.startsWith('prodgraph_') ? LABELS : PROCESS_LABELS;
        for (const [k, v] of Object.entries(s.labels)) {
          assert.ok(known.has(k), `${s.name}: label ${k}`);
          assert.ok(!prefixes.some((p) => v.includes(p)), `${s.name}: ${k}="${v}"`);
          assert.ok(!/Isla|999999|no\/such/.test(v), `${s.name}: ${k}="${v}"`);
        }
      }
      assert.ok(!text.includes('pgk_'), 'a token in the metrics');

      // the webhook worker counts its attempts per subscription and outcome
      const worker = await (
        await import('../src/app.js')
      ).buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        webhooks: true,
      });
      await worker.ready();
      await until('a failed attempt', () => receiver.got.length > 0);
      await until('the attempt counted', async () => {
        const m = parseExposition(await worker.metrics.text()).samples;
        return (valueOf(m, 'prodgraph_webhook_attempts_total', { ...webhook, outcome: 'failed' }) ?? 0) >= 1;
      });
      await worker.close();
      await receiver.close();
      await call(env.app, 'POST', `/api/v1/admin/webhooks/${hook.body.id}/remove`, { token: admin });
    });

    it(
      'promtool check metrics finds nothing to complain about in a scrape of this database’s server',
      // CI installs it (.ci/steps/30-promtool.sh, CI=true): there a missing promtool fails instead of skipping
      {
        skip: promtool() || process.env.CI ? false : 'promtool is not installed (Debian package prometheus)',
      },
      async () => {
        assert.ok(promtool(), 'promtool is not installed (Debian package prometheus)');
        const { text } = await scrape(env, metricsKey);
        // what differs between the databases: PostgreSQL's pool, SQLite's busy waits (no wait yet)
        if (dialect === 'postgres') {
          assert.match(text, /^prodgraph_db_pool_connections\{state="idle"\} \d+$/m);
          assert.match(text, /^prodgraph_db_pool_wait_seconds_bucket\{le="0\.001",outcome="ok"\} \d+$/m);
        }
        assert.match(text, /^# TYPE prodgraph_db_busy_wait_seconds histogram$/m);
        const { status, output } = promtoolCheck(promtool()!, text);
        assert.equal(output, '');
        assert.equal(status, 0);
      },
    );

    it('rate-limit refusals are counted by route', async () => {
      const limited = await createEnv(dialect, { PRODGRAPH_RATE_LIMIT: '2' });
      try {
        await limited.import(smallProduction('limited'));
        const key = await limited.mint({ production: 'limited', scopes: ['read', 'metrics'] });
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await get(limited.app, '/api/v1/production', key)).status);
        assert.deepEqual(statuses, [200, 200, 429, 429]);
        const text = await limited.app.metrics.text();
        assert.equal(
          valueOf(parseExposition(text).samples, 'prodgraph_rate_limit_refusals_total', {
            route: '/api/v1/production',
          }),
          2,
        );
      } finally {
        await limited.close();
      }
    });
  });
}

/**
 * A worker thread holding SQLite's write lock on `path` (`BEGIN IMMEDIATE`), as another process
 * writing would, until told that a write is on its way; then for `holdMs` more, and it commits.
 */
async function lockHolder(path: string, holdMs: number) {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const Database = require(workerData.module);
     const db = new Database(workerData.path);
     db.exec('begin immediate');
     parentPort.postMessage('locked');
     Atomics.wait(workerData.flag, 0, 0);
     setTimeout(() => { db.exec('commit'); db.close(); }, workerData.holdMs);`,
    {
      eval: true,
      workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), path, flag, holdMs },
    },
  );
  const exited = once(worker, 'exit');
  await once(worker, 'message');
  return {
    /** Starts the countdown to the commit: the write about to be sent waits for the lock meanwhile. */
    release() {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    },
    exited,
  };
}

describe('metrics: SQLite busy waits [sqlite]', () => {
  let env: TestEnv;
  let writer: string;
  let metricsKey: string;
  const busy = 'prodgraph_db_busy_wait_seconds';

  before(async () => {
    env = await createEnv('sqlite');
    await env.import(smallProduction('locked'));
    writer = await env.mint({ production: 'locked', label: 'pipeline' });
    metricsKey = await env.mint({ production: 'locked', scopes: ['metrics'] });
  });
  after(() => env.close());

  it('a write that waited for another connection’s write lock is timed; one that found it free is not', async () => {
    const write = async (label: string) =>
      assert.equal(
        (await call(env.app, 'POST', '/api/v1/assets', { token: writer, body: { label } })).status,
        201,
      );
    const count = async (outcome: string) =>
      valueOf((await scrape(env, metricsKey)).samples, `${busy}_count`, { outcome }) ?? 0;
    const sum = async () =>
      valueOf((await scrape(env, metricsKey)).samples, `${busy}_sum`, { outcome: 'ok' }) ?? 0;

    await write('free');
    assert.equal(await count('ok'), 0, 'a write that found the lock free counted as a wait');

    const HOLD_MS = 1500;
    const holder = await lockHolder(env.config.db.dialect === 'sqlite' ? env.config.db.path : '', HOLD_MS);
    holder.release();
    const started = performance.now();
    await write('waited');
    const took = performance.now() - started;
    await holder.exited;
    assert.equal(await count('ok'), 1);
    assert.equal(await count('failed'), 0);
    const waited = await sum();
    assert.ok(waited > 0 && waited * 1000 <= took, `waited ${waited} s in a write of ${took} ms`);
    // the connection's own timeout is back: a later write neither waits nor fails
    await write('after');
    assert.equal(await count('ok'), 1);
    const tool = promtool();
    if (tool)
      assert.deepEqual(promtoolCheck(tool, (await scrape(env, metricsKey)).text), { status: 0, output: '' });
    console.log(
      `SQLite busy wait: ${Math.round(waited * 1000)} ms of a ${Math.round(took)} ms write (lock held ${HOLD_MS} ms after the signal)`,
    );
  });
});

describe('metrics: the scrape listener, promtool and the Grafana dashboard', () => {
  let env: TestEnv;
  let text = '';

  before(async () => {
    env = await createEnv('sqlite');
    await env.import(smallProduction('scraped'));
  });
  after(() => env.close());

  it('PRODGRAPH_METRICS_PORT opens a loopback listener that serves GET /metrics without a key, and nothing else', async () => {
    const port = await freePort();
    const server = await startServer(env, { PRODGRAPH_METRICS_PORT: String(port) });
    try {
      assert.ok(
        server.output.some((l) => l.includes(`metrics listening at http://127.0.0.1:${port}/metrics`)),
      );
      const key = await env.mint({ production: 'scraped', scopes: ['read'] });
      assert.equal(
        (await fetch(`${server.url}/api/v1/production`, { headers: { authorization: `Bearer ${key}` } }))
          .status,
        200,
      );
      const r = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(r.status, 200);
      text = await r.text();
      assert.ok(
        valueOf(parseExposition(text).samples, H, { route: '/api/v1/production', status: '200' })! >= 1,
      );
      // the API's own port still wants a key; the scrape port serves nothing but the metrics
      assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
      const other = await fetch(`http://127.0.0.1:${port}/api/v1/production`);
      assert.equal(other.status, 404);
      assert.equal(((await other.json()) as { code: string }).code, 'route_not_found');
      assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status, 405);
    } finally {
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    }
  });

  it(
    'promtool check metrics finds nothing to complain about',
    // CI installs it (.ci/steps/30-promtool.sh): there a missing promtool fails instead of skipping
    {
      skip: promtool() || process.env.CI ? false : 'promtool is not installed (Debian package prometheus)',
    },
    () => {
      assert.ok(text, 'scraped by the test before');
      assert.ok(promtool(), 'promtool is not installed (Debian package prometheus)');
      const { status, output } = promtoolCheck(promtool()!, text);
      assert.equal(output, '');
      assert.equal(status, 0);
    },
  );

  it('every metric the Grafana dashboard queries exists', () => {
    const dashboard = JSON.parse(
      readFileSync(new URL('../docs/grafana-dashboard.json', import.meta.url), 'utf8'),
    );
    const exprs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if ((k === 'expr' || k === 'definition') && typeof x === 'string') exprs.push(x);
          else walk(x);
        }
      }
    };
    walk(dashboard);
    assert.ok(exprs.length >= 15);
    for (const f of parseExposition(text).families.keys()) seen.add(f);
    if (!process.env.PRODGRAPH_TEST_PG) for (const f of POSTGRES_ONLY) seen.add(f);
    const exists = (name: string) =>
      seen.has(name) ||
      [/_bucket$/, /_count$/, /_sum$/].some((s) => s.test(name) && seen.has(name.replace(s, '')));
    const FUNCTIONS = new Set(['sum', 'rate', 'max', 'by', 'histogram_quantile', 'label_values', 'le']);
    const names = new Set(
      exprs.flatMap((e) =>
        [
          ...e
            .replace(/\{[^}]*\}/g, '')
            .replace(/\[[^\]]*\]/g, '')
            .matchAll(/\b([a-z_][a-z0-9_]*)\b/g),
        ]
          .map((m) => m[1]!)
          .filter((n) => n.includes('_') && !FUNCTIONS.has(n)),
      ),
    );
    assert.ok(names.size >= 20, [...names].join(' '));
    for (const n of names)
      assert.ok(exists(n), `the dashboard queries ${n}, which the service does not expose`);
  });
});

describe('metrics of several worker processes add up', () => {
  it('counts and histograms are summed; a figure read from the shared database is not', async () => {
    const workers = [new Metrics(), new Metrics()];
    workers[0]!.writes.inc(3);
    workers[1]!.writes.inc(4);
    workers[0]!.requests.observe({ method: 'GET', route: '/healthz', status: '200' }, 0.002);
    workers[1]!.requests.observe({ method: 'GET', route: '/healthz', status: '200' }, 0.002);
    const { Gauge } = await import('prom-client');
    for (const w of workers) {
      new Gauge({
        name: 'prodgraph_webhook_backlog',
        help: 'x',
        labelNames: ['webhook'],
        registers: [w.registry],
        aggregator: 'max',
      }).set({ webhook: '1' }, 9);
    }
    const merged = AggregatorRegistry.aggregate(
      await Promise.all(workers.map((w) => w.registry.getMetricsAsJSON())),
    );
    const samples = parseExposition(await merged.metrics()).samples;
    assert.equal(valueOf(samples, 'prodgraph_writes_committed_total'), 7);
    assert.equal(valueOf(samples, H, { route: '/healthz' }), 2);
    assert.equal(valueOf(samples, 'prodgraph_webhook_backlog', { webhook: '1' }), 9);
  });
});
