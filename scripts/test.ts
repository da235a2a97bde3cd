/*
 * `npm test`: the suite run from its JavaScript build (test/support/built.ts), four files at a
 * time. Arguments ending in .test.ts name the files to run (default: every test/*.test.ts); any
 * other argument goes to `node --test` as it is (e.g. --test-name-pattern=paging).
 *
 *   node --import tsx scripts/test.ts [test/<file>.test.ts …] [--test-… flags]
 *
 * Four at a time on two cores: most of a file's time is CPU (its start-up, building apps,
 * imports), the rest waits on PostgreSQL, a spawned server or a timeout. README.md (where it
 * introduces `npm test`) has the suite's times.
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { builtTree } from '../test/support/built.js';

const CONCURRENCY = 4;

/**
 * The longest files first (their measured times: bench/FINDINGS.md, "The suite's slowest
 * files"), the rest in name order. The runner starts files in the order given, four at a
 * time: a long file started last keeps the run going after every other file has finished.
 */
const SLOWEST = [
  'fuzz',
  'crash',
  'security',
  'client-typescript',
  'doctor',
  'shutdown',
  'cli-backup',
  'workers',
  'soak',
].map((name) => join('test', `${name}.test.ts`));
const slowFirst = (a: string, b: string) =>
  (SLOWEST.indexOf(a) + 1 || Infinity) - (SLOWEST.indexOf(b) + 1 || Infinity) || a.localeCompare(b);

const args = process.argv.slice(2);
const named = args.filter((a) => a.endsWith('.test.ts'));
const flags = args.filter((a) => !a.endsWith('.test.ts'));
const files = named.length
  ? named.map((f) => relative(process.cwd(), resolve(f)))
  : (await readdir('test'))
      .filter((n) => n.endsWith('.test.ts'))
      .map((n) => join('test', n))
      .sort(slowFirst);

const tree = await builtTree();
const child = spawn(
  process.execPath,
  [
    '--enable-source-maps',
    '--test',
    `--test-concurrency=${CONCURRENCY}`,
    ...flags,
    ...files.map((f) => join(tree, f.replace(/\.ts$/, '.js'))),
  ],
  { stdio: 'inherit' },
);
// the runner's outcome is the suite's: its exit code, or a failure when a signal ended it
child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
