// Builds the console into dist/console: one script and one stylesheet named by their content
// (cached for good), index.html naming them (never cached), and a .gz beside each file so the
// server sends the compressed bytes without compressing on every request.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'dist', 'console');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
const result = await build({
  entryPoints: { app: join(here, 'src', 'main.tsx') },
  bundle: true,
  format: 'esm',
  target: ['chrome110', 'firefox115', 'safari16'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: out,
  write: false,
  metafile: false,
  logLevel: 'warning',
});

const files = {};
for (const file of result.outputFiles) {
  await writeFile(file.path, file.contents);
  files[file.path.endsWith('.css') ? 'css' : 'js'] = basename(file.path);
}
const icon = await readFile(join(here, 'icon.svg'));
files.icon = `icon-${createHash('sha256').update(icon).digest('hex').slice(0, 8)}.svg`;
await writeFile(join(out, files.icon), icon);
const html = (await readFile(join(here, 'index.html'), 'utf8'))
  .replace('%ICON%', `/console/assets/${files.icon}`)
  .replace('%SCRIPT%', `/console/assets/${files.js}`)
  .replace('%STYLE%', `/console/assets/${files.css}`);
await writeFile(join(out, 'index.html'), html);

let raw = 0;
let gz = 0;
for (const name of ['index.html', files.js, files.css, files.icon]) {
  const bytes = await readFile(join(out, name));
  const zipped = gzipSync(bytes, { level: 9 });
  await writeFile(join(out, `${name}.gz`), zipped);
  raw += bytes.length;
  gz += zipped.length;
}
const digest = createHash('sha256')
  .update(files.js + files.css)
  .digest('hex')
  .slice(0, 12);
await writeFile(
  join(out, 'manifest.json'),
  JSON.stringify({ ...files, build: digest, bytes: raw, gzip: gz }),
);
console.log(`console: dist/console (${raw} bytes, ${gz} gzipped: ${files.js}, ${files.css})`);
