import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { ProductionDocument } from '../../../src/document/schema.js';
import type { TestEnv } from '../env.js';
import { smallProduction } from '../fixtures.js';
import { multipart } from '../multipart.js';
import { upload } from '../write.js';
import type { Keys } from './requests.js';

/** A progressive (4:2:0) JPEG `edge` px square: a few kB, but its decode holds ~3 bytes a pixel. */
export function progressiveJpeg(edge: number): Promise<Buffer> {
  return sharp({ create: { width: edge, height: edge, channels: 3, background: '#3a6ea5' } })
    .jpeg({ progressive: true, chromaSubsampling: '4:2:0' })
    .toBuffer();
}

/**
 * The fuzz's production: the small fixture, and an asset with two released stills (so the look
 * brief has something to decode), one of them a progressive JPEG over the decode budget. The
 * stills are written into `dir`, where the document points.
 */
export async function fuzzProduction(
  dir: string,
  image: Buffer,
  progressive: Buffer,
): Promise<ProductionDocument> {
  await mkdir(join(dir, 'stills'), { recursive: true });
  await writeFile(join(dir, 'stills', 'still.jpg'), image);
  await writeFile(join(dir, 'stills', 'progressive.jpg'), progressive);
  const doc = smallProduction('fuzz');
  const still = (ref: string, version: number, file: string) => ({
    ref,
    version,
    variant: 'Still',
    status: 'approved' as const,
    released: true,
    media: `stills/${file}`,
  });
  doc.assets = [
    ...doc.assets!,
    {
      ref: 'stills',
      label: 'Ward stills',
      kind: 'asset',
      department: 'vfx',
      status: 'active',
      versions: [still('v-still', 1, 'still.jpg'), still('v-progressive', 2, 'progressive.jpg')],
    },
  ];
  return doc;
}

/**
 * Media the fuzz starts with, in and out of the vendor's reach: versions of an asset its grants
 * reach and of one they do not, a submission of its own, a library file's stand-in image.
 * Answers how many the vendor cannot see (at least one, or the lookalike property proves nothing).
 */
export async function seedMedia(
  env: TestEnv,
  refs: Record<string, number>,
  keys: Keys,
  image: Buffer,
): Promise<{ hidden: number }> {
  const ids: number[] = [];
  for (const asset of ['co-coat', 'loc-ward']) {
    const r = await upload(env.app, `/api/v1/assets/${refs[asset]}/versions`, {
      token: keys.wide,
      files: [{ name: `${asset}.jpg`, bytes: image, type: 'image/jpeg' }],
    });
    assert.equal(r.status, 201, r.text);
    ids.push((r.body as { media_id: number }).media_id);
  }
  const { payload, headers } = multipart([
    { name: 'files', filename: 'plate.jpg', content: image, contentType: 'image/jpeg' },
  ]);
  const submitted = await env.app.inject({
    method: 'POST',
    url: `/api/v1/turnovers/${refs['dl-plates']}/submissions`,
    payload,
    headers: { ...headers, authorization: `Bearer ${keys.vendor}` },
  });
  assert.equal(submitted.statusCode, 200, submitted.body);
  ids.push(...submitted.json<{ media: Array<{ id: number }> }>().media.map((m) => m.id));
  const proxy = await env.app.inject({
    method: 'POST',
    url: '/api/v1/storage/media-proxy',
    headers: { authorization: `Bearer ${keys.wide}`, 'content-type': 'application/json' },
    payload: JSON.stringify({
      filespace: 'fuzz-fs',
      path: 'plates/r1/sh010.exr',
      bytes: image.toString('base64'),
    }),
  });
  assert.equal(proxy.statusCode, 200, proxy.body);
  let hidden = 0;
  for (const id of ids) {
    const r = await env.app.inject({
      url: `/api/v1/media/${id}`,
      headers: { authorization: `Bearer ${keys.vendor}` },
    });
    if (r.statusCode === 404) hidden++;
  }
  assert.ok(hidden >= 1, 'every seeded media object is in the vendor’s reach');
  return { hidden };
}
