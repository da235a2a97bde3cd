import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { mintKey } from '../src/auth/key-service.js';
import { parseDbTarget } from '../src/config.js';
import { openAndMigrate } from '../src/db/index.js';
import { importDocument } from '../src/document/import.js';
import { readDocument } from '../src/document/parse.js';
import { FileMediaStore } from '../src/media/store.js';
import { DEMO_FILES } from '../src/cli/demo.js';

/*
 * A delivery's package of one large file, uploaded to a real server process and fetched back,
 * with the server's memory watched from outside (/proc/<pid>/status, every 50 ms): the upload
 * streams to storage, so the server's RSS must not rise by more than ~100 MB whatever the size.
 * The bytes are generated on the fly (a random MiB repeated), never written by the bench.
 *
 *   npm run bench:package                     2 GiB on SQLite in a temporary folder
 *   npm run bench:package -- --gib 0.5        a smaller file
 *   npm run bench:package -- --db postgres://…/db --dir /big/disk
 *
 * Exits 1 when the RSS bound is broken or the bytes come back different.
 */

const { values } = parseArgs({
  options: {
    gib: { type: 'string', default: '2' },
    db: { type: 'string' },
    dir: { type: 'string' },
    'max-rise-mb': { type: 'string', default: '100' },
  },
});
const SIZE = Math.round(Number(values.gib) * 1024 ** 3);
const MAX_RISE_MB = Number(values['max-rise-mb']);
const MiB = 1024 * 1024;
const ROOT = join(import.meta.dirname, '..');

/** The server's resident memory now and at its peak, in MiB, from the kernel's own count. */
async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Samples the server's RSS until stopped; answers the highest seen. */
function watchMemory(pid: number) {
  let peak = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      peak = Math.max(peak, (await memoryOf(pid)).rss);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return Math.max(peak, (await memoryOf(pid)).rss);
  };
}

/** A database with the demo series, an admin key, a production-wide read key and a delivery. */
async function prepare(db: string, media: string) {
  const handle = await openAndMigrate(parseDbTarget(db));
  try {
    const doc = await readDocument(DEMO_FILES[0]!);
    await importDocument(handle.db, doc, {
      store: new FileMediaStore(media),
      baseDir: dirname(DEMO_FILES[0]!),
    });
    const production = doc.production.code;
    const admin = await mintKey(handle.db, { production, label: 'bench: admin', scopes: ['admin'] });
    const wide = await mintKey(handle.db, { production, label: 'bench: read', scopes: ['read'] });
    const delivery = await handle.db
      .selectFrom('deliveries')
      .where('kind', '=', 'external')
      .select('id')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    return { admin: admin.token, wide: wide.token, deliveryId: delivery.id };
  } finally {
    await handle.close();
  }
}

/** A port free now (the server takes it a moment later). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

async function startServer(db: string, media: string): Promise<{ child: ChildProcess; port: number }> {
  const port = String(await freePort());
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src', 'cli.ts'), 'serve', '--db', db, '--media', media, '--port', port],
    {
      env: {
        ...process.env,
        PRODGRAPH_WORKERS: '1',
        PRODGRAPH_LOG_LEVEL: 'info',
        PRODGRAPH_RATE_LIMIT: 'off',
        // the one setting this needs: a single file may be as large as the package's file
        PRODGRAPH_MAX_UPLOAD_BYTES: String(SIZE + MiB),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (chunk.toString().includes('Server listening at')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`the server exited (${code}) before listening:\n${output.join('')}`)),
    );
  });
  return { child, port: Number(port) };
}

/** Streams the multipart form: one `label`, one `files` part of SIZE generated bytes. */
function upload(port: number, token: string, deliveryId: number) {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="label"\r\n\r\nA001C003_plate.bin\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="plate.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const block = randomBytes(MiB);
  const hash = createHash('sha256');
  return new Promise<{ status: number; body: string; sha256: string; ms: number }>((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/api/v1/admin/deliveries/${deliveryId}/files`,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + SIZE + tail.length,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            sha256: hash.digest('hex'),
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on('error', reject);
    void (async () => {
      const write = (chunk: Buffer) =>
        req.write(chunk) ? Promise.resolve() : new Promise<void>((ok) => req.once('drain', () => ok()));
      await write(head);
      for (let sent = 0; sent < SIZE; sent += MiB) {
        const chunk = SIZE - sent >= MiB ? block : block.subarray(0, SIZE - sent);
        hash.update(chunk);
        await write(chunk);
      }
      req.end(tail);
    })().catch(reject);
  });
}

/** Fetches the file back, hashing it as it streams; answers its size, hash and time. */
function download(port: number, token: string, mediaId: number) {
  return new Promise<{ status: number; size: number; sha256: string; ms: number }>((resolve, reject) => {
    const started = performance.now();
    const hash = createHash('sha256');
    let size = 0;
    request(
      {
        host: '127.0.0.1',
        port,
        path: `/api/v1/media/${mediaId}/content`,
        headers: { authorization: `Bearer ${token}` },
      },
      (res) => {
        res.on('data', (d: Buffer) => {
          size += d.length;
          hash.update(d);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            size,
            sha256: hash.digest('hex'),
            ms: performance.now() - started,
          }),
        );
        res.on('error', reject);
      },
    )
      .on('error', reject)
      .end();
  });
}

const mbps = (bytes: number, ms: number) => (bytes / MiB / (ms / 1000)).toFixed(0);
const mb = (n: number) => n.toFixed(0);

const dir = await mkdtemp(join(values.dir ?? tmpdir(), 'prodgraph-package-'));
const db = values.db ?? join(dir, 'bench.db');
const media = join(dir, 'media');
let server: ChildProcess | undefined;
try {
  const keys = await prepare(db, media);
  const started = await startServer(db, media);
  server = started.child;
  const pid = server.pid!;
  // a first request of each kind, so what the server loads once is in the baseline
  await download(started.port, keys.wide, 1).catch(() => undefined);
  const before = await memoryOf(pid);

  const stopUpload = watchMemory(pid);
  const up = await upload(started.port, keys.admin, keys.deliveryId);
  const uploadPeak = await stopUpload();
  if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${up.body}`);
  const [file] = (JSON.parse(up.body) as { files: Array<{ id: number; size: number; sha256: string }> })
    .files;
  if (!file || file.size !== SIZE || file.sha256 !== up.sha256)
    throw new Error(`the stored file differs from the bytes sent: ${up.body}`);

  const afterUpload = await memoryOf(pid);
  const stopDownload = watchMemory(pid);
  const down = await download(started.port, keys.wide, file.id);
  const downloadPeak = await stopDownload();
  if (down.status !== 200 || down.size !== SIZE || down.sha256 !== up.sha256)
    throw new Error(`the download differs: ${down.status}, ${down.size} bytes, ${down.sha256}`);
  const after = await memoryOf(pid);

  const rise = Math.max(uploadPeak, downloadPeak) - before.rss;
  const gib = (SIZE / 1024 ** 3).toFixed(2);
  console.log(
    [
      `## A ${gib} GiB package file, up and down (${values.db ? 'PostgreSQL' : 'SQLite'})`,
      '',
      '| | time | throughput | server RSS peak | rise over the start |',
      '|---|---:|---:|---:|---:|',
      `| upload (POST /admin/deliveries/{id}/files) | ${(up.ms / 1000).toFixed(1)} s | ${mbps(SIZE, up.ms)} MiB/s | ${mb(uploadPeak)} MiB | ${mb(uploadPeak - before.rss)} MiB |`,
      `| download (GET /media/{id}/content) | ${(down.ms / 1000).toFixed(1)} s | ${mbps(SIZE, down.ms)} MiB/s | ${mb(downloadPeak)} MiB | ${mb(downloadPeak - before.rss)} MiB |`,
      '',
      `Server RSS at the start ${mb(before.rss)} MiB, after the upload ${mb(afterUpload.rss)} MiB, at the end ${mb(after.rss)} MiB (kernel high-water mark ${mb(after.hwm)} MiB). SHA-256 checked both ways.`,
    ].join('\n'),
  );
  if (rise > MAX_RISE_MB) {
    console.error(`the server's RSS rose by ${mb(rise)} MiB, over the ${MAX_RISE_MB} MiB bound`);
    process.exitCode = 1;
  }
} finally {
  server?.kill('SIGTERM');
  if (server && server.exitCode === null) await new Promise((resolve) => server!.once('exit', resolve));
  await rm(dir, { recursive: true, force: true });
}
