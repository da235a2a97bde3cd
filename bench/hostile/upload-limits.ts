import { execFile } from 'node:child_process';
import { readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { mintKey } from '../../src/auth/key-service.js';
import { loadConfig } from '../../src/config.js';
import { openAndMigrate } from '../../src/db/index.js';
import { round, serve, stage, type Served } from './setup.js';

/*
 * An upload over the limit, sent whole: how long the server takes to refuse it, how many bytes
 * it reads off the socket meanwhile, how many it stages to disk, and whether the client gets
 * the 413 or a reset. Each upload route is sent a body of SIZE bytes (1 GiB by default; the
 * upload limit is the default 512 MiB, 8 MiB for media proxies, 32 MiB for /mcp), once with its
 * length declared and once chunked, from a plain socket that sends as fast as the server takes
 * it and stops when an answer arrives; the versions route also from curl (which asks
 * `Expect: 100-continue` before a large body, as the reporter did).
 *
 * Bytes read and written are the server process's own (`rchar`, `wchar` of /proc/<pid>/io: every
 * read from a socket or a file; every write to one), staged the largest the staging folder grew.
 *
 *   node --import tsx bench/hostile/upload-limits.ts [size-in-bytes] [postgres://…]
 */

const SIZE = Number(process.argv[2] ?? 1024 ** 3);
const CHUNK = Buffer.alloc(1024 * 1024, 0x5a);
const MiB = (n: number) => round(n / 1024 / 1024, 1);

interface Case {
  route: string;
  path: string;
  token: string;
  /** The multipart form's head and tail around the file's bytes, or JSON's around base64. */
  head: string;
  tail: string;
  contentType: string;
}

interface Outcome {
  status: number | 'reset' | 'none';
  /** From the first byte sent to the status line of the answer. */
  answeredMs: number;
  /** What the client had written when the answer came (or when the connection died). */
  sentMb: number;
  /** Server process: read from sockets and files, written to sockets and files, while it ran. */
  readMb: number;
  writtenMb: number;
  peakStagedMb: number;
}

async function io(pid: number): Promise<{ read: number; written: number }> {
  const text = await readFile(`/proc/${pid}/io`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { read: field('rchar'), written: field('wchar') };
}

async function stagedBytes(media: string): Promise<number> {
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else total += (await stat(p).catch(() => ({ size: 0 }))).size;
    }
  };
  await walk(join(media, '.staging'));
  return total;
}

/** Samples the staging folder until `work` settles; the largest it was. */
async function watchStaging<T>(media: string, work: Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, await stagedBytes(media));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const result = await work.finally(() => (done = true));
  await sampler;
  return { result, peak };
}

/** Sends the case's body of SIZE bytes from a plain socket, as fast as the server takes it. */
function rawUpload(
  served: Served,
  c: Case,
  chunked: boolean,
): Promise<{ status: Outcome['status']; answeredMs: number; sent: number }> {
  const url = new URL(served.url);
  const head = Buffer.from(c.head);
  const tail = Buffer.from(c.tail);
  const total = head.length + SIZE + tail.length;
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let sent = 0;
    let status: Outcome['status'] = 'none';
    let answeredMs = 0;
    let answered = false;
    let started = 0;
    const finish = () => resolve({ status, answeredMs, sent });
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      answered = true;
      answeredMs = performance.now() - started;
      status = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0);
      // a client that reads the answer stops sending and hangs up
      socket.end();
      setTimeout(() => socket.destroy(), 200);
    });
    socket.on('error', () => {
      if (!answered) {
        status = 'reset';
        answeredMs = performance.now() - started;
      }
    });
    socket.on('close', finish);
    const frame = (b: Buffer) =>
      chunked ? [Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')] : [b];
    const write = (parts: Buffer[]): boolean => {
      let ok = true;
      for (const p of parts) {
        ok = socket.write(p);
        sent += p.length;
      }
      return ok;
    };
    socket.on('connect', () => {
      started = performance.now();
      write([
        Buffer.from(
          `POST ${c.path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${c.token}\r\n` +
            `Content-Type: ${c.contentType}\r\n` +
            (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${total}\r\n`) +
            '\r\n',
        ),
        ...frame(head),
      ]);
      let left = SIZE;
      const pump = () => {
        while (left > 0 && !answered && !socket.destroyed) {
          const n = Math.min(left, CHUNK.length);
          left -= n;
          if (!write(frame(CHUNK.subarray(0, n)))) return void socket.once('drain', pump);
        }
        if (left === 0 && !answered && !socket.destroyed)
          write([...frame(tail), ...(chunked ? [Buffer.from('0\r\n\r\n')] : [])]);
      };
      pump();
    });
  });
}

const execFileP = promisify(execFile);

/** curl -F file=@<SIZE bytes>: what a person at a terminal does. */
async function curlUpload(served: Served, c: Case, file: string, chunked: boolean) {
  const t = performance.now();
  const { stdout } = await execFileP(
    'curl',
    [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code} %{size_upload}',
      '-H',
      `Authorization: Bearer ${c.token}`,
      ...(chunked ? ['-H', 'Transfer-Encoding: chunked'] : []),
      '-F',
      `file=@${file};type=image/jpeg`,
      `${served.url}${c.path}`,
    ],
    { maxBuffer: 1024 * 1024 },
  ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? 'reset 0' }));
  const [code, uploaded] = stdout.trim().split(' ');
  return {
    status: (code === '000' ? 'reset' : Number(code)) as Outcome['status'],
    answeredMs: performance.now() - t,
    sent: Number(uploaded),
  };
}

async function measure(
  served: Served,
  media: string,
  send: () => Promise<{ status: Outcome['status']; answeredMs: number; sent: number }>,
): Promise<Outcome> {
  const pid = served.child.pid!;
  const before = await io(pid);
  const { result, peak } = await watchStaging(media, send());
  // what the server still reads or writes after answering counts too
  await new Promise((r) => setTimeout(r, 500));
  const after = await io(pid);
  return {
    status: result.status,
    answeredMs: round(result.answeredMs, 0),
    sentMb: MiB(result.sent),
    readMb: MiB(after.read - before.read),
    writtenMb: MiB(after.written - before.written),
    peakStagedMb: MiB(peak),
  };
}

const form = (field: string, filename: string) => {
  const boundary = '----prodgraphbench7d1c';
  return {
    head: `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: image/jpeg\r\n\r\n`,
    tail: `\r\n--${boundary}--\r\n`,
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
};

const s = await stage(process.argv[3]);
const config = loadConfig({ db: s.db, media: s.media });
const handle = await openAndMigrate(config.db);
const ids = {
  asset: (
    await handle.db
      .selectFrom('nodes')
      .where('ref', '=', 'co-mara-coat')
      .select('id')
      .executeTakeFirstOrThrow()
  ).id,
  delivery: (
    await handle.db
      .selectFrom('deliveries')
      .where('ref', '=', 'dl-101-comp')
      .select('id')
      .executeTakeFirstOrThrow()
  ).id,
};
const vendor = await mintKey(handle.db, {
  production: 'nightfall',
  label: 'bench vendor',
  engagement: 'eng-pixel',
  scopes: ['read', 'submit:turnover'],
});
await handle.close();

const cases: Case[] = [
  {
    route: 'POST /assets/{id}/versions',
    path: `/api/v1/assets/${ids.asset}/versions`,
    token: s.wideKey,
    ...form('file', 'big.jpg'),
  },
  {
    route: 'POST /turnovers/{id}/submissions',
    path: `/api/v1/turnovers/${ids.delivery}/submissions`,
    token: vendor.token,
    ...form('files', 'big.jpg'),
  },
  {
    route: 'POST /storage/media-proxy (multipart)',
    path: '/api/v1/storage/media-proxy',
    token: s.wideKey,
    ...form('file', 'big.jpg'),
  },
  {
    route: 'POST /storage/media-proxy (JSON)',
    path: '/api/v1/storage/media-proxy',
    token: s.wideKey,
    head: '{"filespace":"x","path":"/a.exr","bytes":"',
    tail: '"}',
    contentType: 'application/json',
  },
  {
    route: 'POST /mcp (submit_turnover)',
    path: '/mcp',
    token: vendor.token,
    head: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_turnover","arguments":{"delivery_id":${ids.delivery},"files":[{"filename":"a.jpg","content_base64":"`,
    tail: '"}]}}}',
    contentType: 'application/json',
  },
];

const served = await serve(s, 18000 + Math.floor(Math.random() * 2000));
// each key's first request warmed up (its lookup, the routes' first run), so the figures are the limit's
for (const c of cases)
  await fetch(`${served.url}${c.path}`, { method: 'POST', headers: { authorization: `Bearer ${c.token}` } });
const sparse = join(s.media, '..', 'big.jpg');
await writeFile(sparse, '');
await truncate(sparse, SIZE);
const rows: Array<Outcome & { route: string; client: string; body: string }> = [];
try {
  for (const c of cases) {
    for (const chunked of [false, true]) {
      const body = chunked ? 'chunked' : 'Content-Length';
      rows.push({
        route: c.route,
        client: 'socket',
        body,
        ...(await measure(served, s.media, () => rawUpload(served, c, chunked))),
      });
      if (c === cases[0])
        rows.push({
          route: c.route,
          client: 'curl -F',
          body,
          ...(await measure(served, s.media, () => curlUpload(served, c, sparse, chunked))),
        });
    }
  }
} finally {
  await served.stop();
}

console.log(
  `\n${MiB(SIZE)} MiB sent to each upload route (${config.db.dialect}); server's own I/O while it ran\n`,
);
console.log(
  '| route | client | body | answer | after ms | client had sent MiB | server read MiB | server wrote MiB | staged peak MiB |',
);
console.log('|---|---|---|---|---:|---:|---:|---:|---:|');
for (const r of rows)
  console.log(
    `| ${r.route} | ${r.client} | ${r.body} | ${r.status} | ${r.answeredMs} | ${r.sentMb} | ${r.readMb} | ${r.writtenMb} | ${r.peakStagedMb} |`,
  );
