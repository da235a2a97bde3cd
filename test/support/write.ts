import sharp from 'sharp';
import type { App } from '../../src/app.js';
import type { Reply } from './http.js';

export interface UploadFile {
  name: string;
  bytes: Buffer;
  type?: string;
  /** Form field name; `file` unless a test wants another. */
  field?: string;
}

/** A multipart/form-data request through app.inject, built the way a browser or curl would. */
export async function upload(
  app: App,
  url: string,
  options: {
    token?: string;
    files?: UploadFile[];
    fields?: Record<string, string>;
    headers?: Record<string, string>;
  },
): Promise<Reply> {
  const form = new FormData();
  for (const [k, v] of Object.entries(options.fields ?? {})) form.append(k, v);
  for (const f of options.files ?? []) {
    form.append(
      f.field ?? 'file',
      new Blob([f.bytes], { type: f.type ?? 'application/octet-stream' }),
      f.name,
    );
  }
  const encoded = new Response(form);
  const payload = Buffer.from(await encoded.arrayBuffer());
  const headers: Record<string, string> = {
    'content-type': encoded.headers.get('content-type')!,
    ...options.headers,
  };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await app.inject({ method: 'POST', url, headers, payload });
  let body: unknown = undefined;
  if (res.body !== '' && String(res.headers['content-type'] ?? '').includes('json'))
    body = JSON.parse(res.body);
  return { status: res.statusCode, body, headers: res.headers, text: res.body };
}

/** A real, tiny JPEG (what an on-set cart sends); `seed` varies the bytes. */
export function jpeg(seed = 0): Promise<Buffer> {
  return sharp({
    create: { width: 8, height: 6, channels: 3, background: { r: seed % 256, g: 90, b: 160 } },
  })
    .jpeg()
    .toBuffer();
}

/** Every stored media file under the store's root (the staging area apart), relative keys. */
export async function storedFiles(root: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const { join, relative } = await import('node:path');
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(relative(root, p));
    }
  };
  await walk(root);
  return out.sort();
}
