import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { openAndMigrate } from '../../src/db/index.js';
import { parseDbTarget } from '../../src/config.js';
import { FileMediaStore } from '../../src/media/store.js';
import { round, serve, stage, underWatch, type Served, type Stage } from './setup.js';

/*
 * What decoding one image costs the server. A progressive JPEG cannot be shrunk while it is
 * decoded: the decoder holds every DCT coefficient of the whole image (2 bytes each) until the
 * last scan. So a 1.5 MB progressive 16,000² JPEG sent to the media proxy, and a progressive
 * 12,000×8,000 still behind a look brief, are measured against a baseline (sequential) JPEG of
 * the same size in the same run (the control: shrink-on-load keeps it small). Reported: the
 * answer, its time, and the server's peak RSS above its RSS before the request; then eight
 * proxies at once.
 *
 *   node --import tsx bench/hostile/decode-memory.ts [port]     (port: default 8402)
 */

const CACHE = join(tmpdir(), 'prodgraph-bench-jpegs');

/** A smooth gradient (so the file stays small whatever its pixel count), cached between runs. */
async function jpeg(width: number, height: number, progressive: boolean): Promise<Buffer> {
  await mkdir(CACHE, { recursive: true });
  const path = join(CACHE, `${width}x${height}${progressive ? '-progressive' : ''}.jpg`);
  try {
    return await readFile(path);
  } catch {
    // 16 × 16 colours stretched: libvips builds the big image lazily, row by row
    const tile = Buffer.alloc(16 * 16 * 3);
    for (let i = 0; i < 256; i++) tile.set([i, 255 - i, (i * 7) % 256], i * 3);
    const bytes = await sharp(tile, { raw: { width: 16, height: 16, channels: 3 } })
      .resize(width, height, { kernel: 'linear' })
      .jpeg({ quality: 70, progressive, chromaSubsampling: '4:2:0' })
      .toBuffer();
    await writeFile(path, bytes);
    return bytes;
  }
}

async function post(served: Served, path: string, key: string, body?: unknown) {
  const r = await fetch(`${served.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.text()).slice(0, 200) };
}

/** A live library file for the proxies to stand in for. */
async function libraryFile(served: Served, s: Stage, path: string) {
  const r = await post(served, '/api/v1/storage/events', s.wideKey, {
    filespace: 'nightfall-main',
    events: [
      {
        event_type: 'create',
        path,
        source: 'scan',
        dedupe_key: `bench-${path}`,
        detected_at: new Date().toISOString(),
      },
    ],
  });
  if (r.status !== 200 || !r.body.includes('"accepted":1'))
    throw new Error(`library file: ${r.status} ${r.body}`);
}

/** A released still of the demo whose stored bytes the bench replaces (no brief stored for it yet). */
async function stills(s: Stage, count: number): Promise<Array<{ versionId: number; file: string }>> {
  const handle = await openAndMigrate(parseDbTarget(s.db));
  try {
    const rows = await handle.db
      .selectFrom('versions as v')
      .innerJoin('media as m', 'm.id', 'v.media_id')
      .where('v.released', '=', 1)
      .where('m.content_type', '=', 'image/jpeg')
      .select(['v.id', 'm.storage_key'])
      .orderBy('v.id')
      .limit(count)
      .execute();
    const store = new FileMediaStore(s.media);
    return rows.map((r) => ({ versionId: r.id, file: store.resolveKey(r.storage_key)! }));
  } finally {
    await handle.close();
  }
}

async function measure(served: Served, name: string, run: () => Promise<{ status: number; body: string }>) {
  const before = await served.rssMb();
  const m = await underWatch(served, run);
  const after = await served.rssMb();
  console.log(
    `${name}: ${m.result.status} in ${round(m.ms)} ms; RSS ${round(before)} → peak ${round(m.peakRssMb)} ` +
      `(+${round(m.peakRssMb - before)}) → ${round(after)} MiB after` +
      (m.result.status >= 400 ? `\n    ${m.result.body}` : ''),
  );
}

async function main() {
  const port = Number(process.argv[2] ?? 8402);
  const images = {
    baseline16k: await jpeg(16_000, 16_000, false),
    progressive16k: await jpeg(16_000, 16_000, true),
    baseline12k: await jpeg(12_000, 8_000, false),
    progressive12k: await jpeg(12_000, 8_000, true),
  };
  for (const [name, bytes] of Object.entries(images))
    console.log(`${name}: ${round(bytes.length / 1e6, 2)} MB`);
  const s = await stage();
  const targets = await stills(s, 2);
  await writeFile(targets[0]!.file, images.baseline12k);
  await writeFile(targets[1]!.file, images.progressive12k);
  console.log(`stills replaced: ${(await stat(targets[1]!.file)).size} bytes`);
  const served = await serve(s, port);
  try {
    for (let i = 0; i < 10; i++) await libraryFile(served, s, `plates/p${i}.exr`);
    const proxy = (path: string, bytes: Buffer) => () =>
      post(served, '/api/v1/storage/media-proxy', s.wideKey, {
        filespace: 'nightfall-main',
        path,
        bytes: bytes.toString('base64'),
      });
    const brief = (versionId: number) => () =>
      post(served, `/api/v1/vision/looks/${versionId}/brief`, s.wideKey);
    console.log(`server RSS at rest: ${round(await served.rssMb())} MiB`);
    await measure(
      served,
      'control: baseline 16,000² JPEG → media proxy',
      proxy('plates/p0.exr', images.baseline16k),
    );
    await measure(
      served,
      'progressive 16,000² JPEG → media proxy',
      proxy('plates/p1.exr', images.progressive16k),
    );
    await measure(served, 'control: baseline 12,000×8,000 still → look brief', brief(targets[0]!.versionId));
    await measure(served, 'progressive 12,000×8,000 still → look brief', brief(targets[1]!.versionId));
    await measure(served, 'eight progressive 16,000² proxies at once', async () => {
      const all = await Promise.all(
        Array.from({ length: 8 }, (_, i) => proxy(`plates/p${i + 2}.exr`, images.progressive16k)()),
      );
      const statuses = [...new Set(all.map((a) => a.status))].join(',');
      return { status: all.every((a) => a.status === all[0]!.status) ? all[0]!.status : 0, body: statuses };
    });
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`server RSS two seconds later: ${round(await served.rssMb())} MiB`);
  } finally {
    await served.stop();
  }
}

await main();
