import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The built console (console/build.mjs writes it to dist/console at `npm ci` / `npm run
 * build`). Found beside the package from src/ and from dist/ alike, so `npm start`, the tests
 * and an installed package all serve the same files.
 */
export const CONSOLE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'dist', 'console');

export interface ConsoleBuild {
  dir: string;
  /** The page itself: small, read once, sent with no-cache (it names the content-hashed assets). */
  html: Buffer;
  htmlGzip: Buffer;
  assets: string[];
}

/** The build, or null when it is missing (a checkout that has not run `npm run build`). */
export async function loadConsole(dir = CONSOLE_DIR): Promise<ConsoleBuild | null> {
  try {
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const assets = ['js', 'css', 'icon']
      .map((k) => manifest[k])
      .filter((f): f is string => typeof f === 'string');
    const [html, htmlGzip] = await Promise.all([
      readFile(join(dir, 'index.html')),
      readFile(join(dir, 'index.html.gz')),
    ]);
    return { dir, html, htmlGzip, assets };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
