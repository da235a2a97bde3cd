import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, version as esbuildVersion } from 'esbuild';

/*
 * The source tree as plain JavaScript, for the processes tests spawn (a server, a CLI command).
 * A process started with `--import tsx` sends every module it loads, each of node_modules too,
 * through tsx's loader: about 2.5 s more CPU per start-up than the same code as JavaScript, which
 * on two cores made the spawned start-ups the largest cost of the suite. The tree is what tsx runs
 * (esbuild's transpile of src/ file by file, same imports), built once per content of src/ and
 * shared by every test process of the run; `--enable-source-maps` keeps stack traces on src/.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const CACHE = join(tmpdir(), 'prodgraph-test-build');
/**
 * What sits beside src/ in the repository and the code reaches by a relative path (package.json
 * for its version and "type": "module", demo/, the console in dist/) or by resolution (node_modules).
 */
const BESIDE = ['package.json', 'node_modules', 'demo', 'dist'];

let built: Promise<string> | undefined;

async function sourceFiles(): Promise<string[]> {
  const names = await readdir(join(ROOT, 'src'), { recursive: true });
  return names
    .filter((n) => n.endsWith('.ts'))
    .sort()
    .map((n) => join('src', n));
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

async function buildTree(): Promise<string> {
  const files = await sourceFiles();
  const hash = createHash('sha256').update(`${ROOT}\0${esbuildVersion}\0`);
  for (const f of files)
    hash
      .update(`${f}\0`)
      .update(await readFile(join(ROOT, f)))
      .update('\0');
  const tree = join(CACHE, hash.digest('hex').slice(0, 16));
  if (existsSync(tree)) return tree;
  // built aside and renamed into place: test files running at once may build it together
  const aside = `${tree}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await mkdir(aside, { recursive: true });
  try {
    await build({
      absWorkingDir: ROOT,
      entryPoints: files,
      outdir: join(aside, 'src'),
      outbase: 'src',
      bundle: false,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'error',
    });
    for (const name of BESIDE) await symlink(join(ROOT, name), join(aside, name));
    await rename(aside, tree);
    await forgetOldTrees(tree);
  } catch (err) {
    await rm(aside, { recursive: true, force: true });
    // another test process renamed its build into place first: the same content
    if (!existsSync(tree)) throw err;
  }
  return tree;
}

/** The built `src/cli.js` to spawn: `node --enable-source-maps <it> …`. */
export async function builtCli(): Promise<string> {
  built ??= buildTree();
  return join(await built, 'src', 'cli.js');
}

/** Node's arguments that run the CLI as a process of its own. */
export async function cliArgv(): Promise<string[]> {
  return ['--enable-source-maps', await builtCli()];
}
