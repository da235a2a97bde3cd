/*
 * The OpenAPI document exactly as a server built from this checkout serves it (GET
 * /api/v1/openapi.json, default configuration), for the linter and the client generator.
 *
 *   node --import tsx scripts/served-openapi.ts dist/openapi.json
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

export async function servedDocument(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'prodgraph-openapi-'));
  // the default configuration, whatever this shell's PRODGRAPH_* say: the document is the product's
  const app = await buildApp({
    config: loadConfig({ db: join(dir, 'doc.db'), media: join(dir, 'media') }, {}),
    logger: false,
  });
  try {
    const res = await app.inject({ url: '/api/v1/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}`);
    return res.json<Record<string, unknown>>();
  } finally {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: served-openapi.ts <file>');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(await servedDocument(), null, 2)}\n`);
}
