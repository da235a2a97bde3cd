import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { mintKey } from '../src/auth/key-service.js';
import { parseDbTarget } from '../src/config.js';
import { openAndMigrate } from '../src/db/index.js';
import { importDocument } from '../src/document/import.js';
import { FileMediaStore } from '../src/media/store.js';
import { smallProduction } from '../test/support/fixtures.js';

/*
 * How long after a write is acknowledged through server A a long-poll on GET /changes held by
 * server B answers: two independent `prodgraph serve` processes on one PostgreSQL schema (made
 * for the run, dropped after). The control, in the same run, is the same wake-up within one
 * server (the long-poll and the write both on A).
 *
 *   node --import tsx bench/wake-across-servers.ts [--pg URL] [--rounds N]
 */

const { values } = parseArgs({
  options: {
    pg: {
      type: 'string',
      default: process.env.PRODGRAPH_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test',
    },
    rounds: { type: 'string', default: '60' },
  },
});
const rounds = Number(values.rounds);
const ROOT = join(import.meta.dirname, '..');

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: values.pg });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A schema with one small production and a read/write key. */
async function prepare(schema: string, media: string): Promise<string> {
  await admin((c) => c.query(`create schema ${schema}`));
  const handle = await openAndMigrate(parseDbTarget(values.pg), { schema, poolSize: 2 });
  try {
    await importDocument(handle.db, smallProduction('film'), {
      store: new FileMediaStore(media),
      baseDir: media,
    });
    return (await mintKey(handle.db, { label: 'bench', production: 'film', scopes: ['read', 'write'] }))
      .token;
  } finally {
    await handle.close();
  }
}

async function serve(db: string, media: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'src', 'cli.ts'),
      'serve',
      '--db',
      db,
      '--media',
      media,
      '--port',
      String(port),
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        PRODGRAPH_WORKERS: '1',
        PRODGRAPH_LOG_LEVEL: 'warn',
        PRODGRAPH_RATE_LIMIT: 'off',
      },
    },
  );
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return child;
    await sleep(100);
  }
  throw new Error('serve did not become ready');
}

/** Milliseconds from the write's acknowledgement (through `writer`) to the long-poll's answer (on `reader`). */
async function oneWake(reader: string, writer: string, token: string, n: number): Promise<number> {
  const headers = { authorization: `Bearer ${token}` };
  const head = (await (await fetch(`${reader}/api/v1/changes?after=now`, { headers })).json()) as {
    next_cursor: string;
  };
  let answered = 0;
  const poll = fetch(`${reader}/api/v1/changes?after=${head.next_cursor}&wait=10`, { headers }).then(
    async (r) => {
      answered = performance.now();
      return ((await r.json()) as { changes: unknown[] }).changes.length;
    },
  );
  // the long-poll is held by now; a random phase so no poll interval lines up with the writes
  await sleep(60 + Math.random() * 200);
  const res = await fetch(`${writer}/api/v1/assets`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ label: `wake ${n}` }),
  });
  const acknowledged = performance.now();
  if (res.status !== 201) throw new Error(`write answered ${res.status}`);
  await res.arrayBuffer();
  if ((await poll) === 0) throw new Error('the long-poll answered without the change');
  return Math.max(0, answered - acknowledged);
}

function summary(label: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `${label.padEnd(34)} median ${at(0.5).toFixed(1)} ms  p90 ${at(0.9).toFixed(1)} ms  max ${s.at(-1)!.toFixed(1)} ms  (n=${s.length})`;
}

async function main(): Promise<void> {
  const schema = `bench_wake_${randomBytes(4).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'prodgraph-wake-'));
  const media = join(dir, 'media');
  const servers: ChildProcess[] = [];
  try {
    const token = await prepare(schema, media);
    const url = new URL(values.pg);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const [a, b] = ['A', 'B'].map((_, i) => `http://127.0.0.1:${18_600 + i}`) as [string, string];
    servers.push(
      ...(await Promise.all([serve(url.toString(), media, 18_600), serve(url.toString(), media, 18_601)])),
    );
    for (let i = 0; i < 5; i++) await oneWake(b, a, token, -i); // warm both
    const across: number[] = [];
    const within: number[] = [];
    for (let i = 0; i < rounds; i++) {
      across.push(await oneWake(b, a, token, i));
      within.push(await oneWake(a, a, token, i));
    }
    console.log(summary('long-poll on B, write through A', across));
    console.log(summary('control: long-poll and write on A', within));
  } finally {
    for (const s of servers) {
      s.kill('SIGINT');
      await once(s, 'exit');
    }
    await admin((c) => c.query(`drop schema ${schema} cascade`));
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
