import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { DEMO_FILES } from '../src/cli/demo.js';
import { ChangeLog, commitChanges } from '../src/db/change-log.js';
import { openAndMigrate } from '../src/db/index.js';
import { importDocument } from '../src/document/import.js';
import { readDocument } from '../src/document/parse.js';
import { mintKey } from '../src/auth/key-service.js';
import { FileMediaStore } from '../src/media/store.js';

/*
 * The change feed's latency and the webhooks' throughput, on SQLite or PostgreSQL:
 *
 *   node --import tsx bench/changes.ts [--pg postgres://…/db] [--rounds 200] [--deliveries 2000]
 *
 * - feed latency, this process: a client holds `GET /changes?wait=30` over real HTTP while a
 *   write (`POST /assets`) is made; from sending the write to the feed's answer. The write's
 *   own round trip, measured in the same rounds, is the control.
 * - feed latency, another process: the change is committed over a second connection pool
 *   with no in-process signal (as a second server or the CLI would), so only the watch's poll
 *   (every 250 ms) can see it.
 * - webhook throughput: that many changes waiting, one subscription, a local receiver that
 *   answers 204 at once; deliveries per second until all are logged. The control is the same
 *   number of sequential POSTs made straight to the receiver from this process.
 */

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const pgUrl = flag('--pg');
const ROUNDS = Number(flag('--rounds') ?? 200);
const DELIVERIES = Number(flag('--deliveries') ?? 2000);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'prodgraph-bench-changes-'));
  let schema: string | undefined;
  if (pgUrl) {
    schema = `bench_${randomBytes(4).toString('hex')}`;
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
  }
  const config = loadConfig(
    { db: pgUrl ?? join(dir, 'bench.db'), media: join(dir, 'media'), port: '1' },
    { PRODGRAPH_LOG_LEVEL: 'silent' },
  );
  const handle = await openAndMigrate(config.db, { schema });
  const other = await openAndMigrate(config.db, { schema, poolSize: 2 });
  const store = new FileMediaStore(config.mediaDir);
  const file = DEMO_FILES[1]!;
  const doc = await readDocument(file);
  const { production } = await importDocument(handle.db, doc, { store, baseDir: dirname(file) });
  const key = (
    await mintKey(handle.db, {
      production: doc.production.code,
      label: 'bench',
      scopes: ['read', 'write', 'admin'],
    })
  ).token;
  const app = await buildApp({ config, database: handle, store, logger: false, webhooks: true });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1`;
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const send = (method: string, url: string, body?: unknown) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest(
        url,
        {
          method,
          agent,
          headers: {
            authorization: `Bearer ${key}`,
            ...(payload
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode!, json: text ? JSON.parse(text) : null });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const head = async () => (await send('GET', `${base}/changes?after=now`)).json.next_cursor as string;

  // warm up
  for (let i = 0; i < 20; i++) await send('POST', `${base}/assets`, { label: `warm ${i}` });

  const feed: number[] = [];
  const write: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const cursor = await head();
    const waiting = send('GET', `${base}/changes?after=${cursor}&wait=30`);
    await new Promise((r) => setTimeout(r, 5));
    const t0 = performance.now();
    const written = send('POST', `${base}/assets`, { label: `bench ${i}` }).then(
      () => performance.now() - t0,
    );
    const answer = await waiting;
    feed.push(performance.now() - t0);
    write.push(await written);
    if (answer.json.changes.length === 0) throw new Error('the long-poll answered empty');
  }

  const remote: number[] = [];
  const remoteRounds = Math.min(ROUNDS, 60);
  for (let i = 0; i < remoteRounds; i++) {
    const cursor = await head();
    const waiting = send('GET', `${base}/changes?after=${cursor}&wait=30`);
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 250));
    const t0 = performance.now();
    await other.db
      .transaction()
      .execute((trx) =>
        commitChanges(
          trx,
          { productionId: production.id, actor: 'bench' },
          new ChangeLog().updated('production', production.id),
        ),
      );
    await waiting;
    remote.push(performance.now() - t0);
  }

  // webhook throughput
  let received = 0;
  let done: () => void = () => undefined;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(204).end();
      if (++received === DELIVERIES) done();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  // control: the same number of sequential POSTs straight to the receiver, with fetch as the worker uses
  const c0 = performance.now();
  for (let i = 0; i < DELIVERIES; i++) {
    const r = await fetch(hookUrl, {
      method: 'POST',
      body: '{"control":true}',
      headers: { 'content-type': 'application/json' },
    });
    await r.body?.cancel();
  }
  const controlPerSecond = DELIVERIES / ((performance.now() - c0) / 1000);
  received = 0;
  const all = new Promise<void>((r) => (done = r));
  const start = await head();
  await other.db.transaction().execute(async (trx) => {
    const log = new ChangeLog();
    for (let i = 0; i < DELIVERIES; i++) log.updated('scene', 1_000_000 + i);
    await commitChanges(trx, { productionId: production.id, actor: 'bench' }, log);
  });
  const t0 = performance.now();
  const sub = await send('POST', `${base}/admin/webhooks`, { url: hookUrl, after: start });
  if (sub.status !== 201) throw new Error(JSON.stringify(sub.json));
  await all;
  const hooksPerSecond = DELIVERIES / ((performance.now() - t0) / 1000);

  const lines = [
    `database: ${handle.dialect}; node ${process.version}; ${ROUNDS} rounds`,
    `feed latency, write in this process (POST sent → long-poll answered): p50 ${ms(pct(feed, 50))}, p99 ${ms(pct(feed, 99))}`,
    `  control, the write's own round trip:                              p50 ${ms(pct(write, 50))}, p99 ${ms(pct(write, 99))}`,
    `feed latency, commit by another connection (poll every 250 ms):     p50 ${ms(pct(remote, 50))}, p99 ${ms(pct(remote, 99))} (${remoteRounds} rounds)`,
    `webhook throughput: ${DELIVERIES} deliveries at ${hooksPerSecond.toFixed(0)}/s (one subscription, in order, each logged)`,
    `  control, sequential POSTs straight to the receiver: ${controlPerSecond.toFixed(0)}/s; ratio ${(hooksPerSecond / controlPerSecond).toFixed(2)}`,
  ];
  console.log(lines.join('\n'));

  receiver.close();
  agent.destroy();
  app.server.closeAllConnections();
  await app.close();
  await other.close();
  await handle.close();
  if (schema) {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    await c.query(`drop schema ${schema} cascade`);
    await c.end();
  }
  await rm(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
