import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, version as esbuildVersion } from 'esbuild';

/*
 * The repository's TypeScript as plain JavaScript, for the processes the suite starts: each test
 * file's (npm test runs the tree's test/*.test.js, scripts/test.ts) and the servers and CLI
 * commands tests spawn. A process started with `--import tsx` sends every module it loads, each
 * of node_modules too, through tsx's loader: about 2.5 s more CPU per start-up than the same code
 * as JavaScript, which on two cores made start-ups the largest cost of the suite. The tree is
 * what tsx runs (esbuild's transpile file by file, the same imports), built once per content of
 * the sources and shared by every process of a run; `--enable-source-maps` keeps stack traces on
 * the sources.
 *
 * Everything else is linked into the tree (node_modules, dist/, README.md, fixtures, the .ts
 * sources themselves), so a path taken relative to a module (`../README.md`, `../demo`,
 * `fixtures/…`, `../src/db/schema.ts`) finds what it finds in the repository.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const CACHE = join(tmpdir(), 'prodgraph-test-build');
/** Marks a built tree: run from one, this module is in it, and the tree is its own. */
const MARK = '.prodgraph-built-tree';
/** Folders linked whole, never looked into: installed packages and build output. */
const OPAQUE = new Set(['.git', 'node_modules', 'dist']);

let built: Promise<string> | undefined;

const isSource = (name: string) => name.endsWith('.ts') && !name.endsWith('.d.ts');

/**
 * The repository's sources (relative paths), every folder that holds one, and every path walked
 * (a file added beside the sources is linked by the next build).
 */
async function sourcesUnder(
  dir = '',
): Promise<{ sources: string[]; folders: Set<string>; walked: string[] }> {
  const sources: string[] = [];
  const folders = new Set<string>();
  const walked: string[] = [];
  for (const e of await readdir(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, e.name);
    walked.push(path);
    if (e.isDirectory() && !OPAQUE.has(e.name)) {
      const inner = await sourcesUnder(path);
      sources.push(...inner.sources);
      walked.push(...inner.walked);
      for (const f of inner.folders) folders.add(f);
    } else if (e.isFile() && isSource(e.name)) {
      sources.push(path);
      folders.add(dir);
    }
  }
  if (folders.size && dir) folders.add(dir);
  return { sources: sources.sort(), folders, walked };
}

/** Trees of sources long gone (older than a day: no run of the suite is still using them). */
async function forgetOldTrees(keep: string): Promise<void> {
  const day = Date.now() - 24 * 3600 * 1000;
  for (const name of await readdir(CACHE)) {
    const path = join(CACHE, name);
    if (path === keep) continue;
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < day) await rm(path, { recursive: true, force: true });
  }
}

/** Links what is not transpiled into the tree: whole folders where they hold no source. */
async function linkAround(into: string, folders: Set<string>, dir = ''): Promise<void> {
  for (const e of await readdir(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.name === '.git') continue;
    if (e.isDirectory() && folders.has(path)) {
      await mkdir(join(into, path), { recursive: true });
      await linkAround(into, folders, path);
    } else {
      await symlink(join(ROOT, path), join(into, path));
    }
  }
}

async function buildTree(): Promise<string> {
  const { sources, folders, walked } = await sourcesUnder();
  const hash = createHash('sha256').update(`${ROOT}\0${esbuildVersion}\0${walked.sort().join('\0')}\0`);
  for (const f of sources)
    hash
      .update(`${f}\0`)
      .update(await readFile(join(ROOT, f)))
      .update('\0');
  const tree = join(CACHE, hash.digest('hex').slice(0, 16));
  if (existsSync(tree)) return tree;
  // built aside and renamed into place: test processes starting at once may build it together
  const aside = `${tree}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await mkdir(aside, { recursive: true });
  try {
    await build({
      absWorkingDir: ROOT,
      entryPoints: sources,
      outdir: aside,
      outbase: '.',
      bundle: false,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'error',
    });
    await linkAround(aside, folders);
    await writeFile(join(aside, MARK), '');
    await rename(aside, tree);
    await forgetOldTrees(tree);
  } catch (err) {
    await rm(aside, { recursive: true, force: true });
    // another process renamed its build into place first: the same content
    if (!existsSync(tree)) throw err;
  }
  return tree;
}

/** The built tree (its src/ and test/ as JavaScript), built first when the sources changed. */
export function builtTree(): Promise<string> {
  built ??= existsSync(join(ROOT, MARK)) ? Promise.resolve(ROOT) : buildTree();
  return built;
}

/** Node's arguments that run the CLI as a process of its own: `node <these> serve …`. */
export async function cliArgv(): Promise<string[]> {
  return ['--enable-source-maps', join(await builtTree(), 'src', 'cli.js')];
}
