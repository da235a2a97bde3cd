import { spawn } from 'node:child_process';
import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { parseDbTarget } from '../src/config.js';
import { openDatabase } from '../src/db/index.js';
import { generate } from '../src/generate/index.js';
import type { BenchOptions } from './options.js';

export const BENCH_DIR = import.meta.dirname;
export const CACHE_DIR = join(BENCH_DIR, '.cache');

export interface ImportStats {
  ms: number;
  peakRssMb: number;
}

export interface Dataset {
  dialect: 'sqlite' | 'postgres';
  /** What `--db` takes. */
  db: string;
  media: string;
  documentFile: string;
  documentMb: number;
  import: ImportStats & { when: 'this run' | 'cached' };
  close(): Promise<void>;
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

/**
 * Runs `prodgraph import` in a process of its own, with Node's default heap as a user's would
 * have, and returns its time and peak memory.
 */
async function importInChild(doc: string, db: string, media: string): Promise<ImportStats> {
  const statsFile = join(CACHE_DIR, `import-${process.pid}.json`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(BENCH_DIR, 'import-child.ts'), doc, db, media, statsFile],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`import failed (${signal ?? `exit ${code}`})`)),
    );
  });
  const stats = JSON.parse(await readFile(statsFile, 'utf8')) as ImportStats;
  await rm(statsFile, { force: true });
  return stats;
}

/** The generated document for this scale and seed, generated once and kept in the cache. */
async function documentFor(options: BenchOptions): Promise<string> {
  const file = join(CACHE_DIR, `scale-${options.scale}-seed-${options.seed}.json`);
  if (!(await exists(file))) {
    log(`generating scale ${options.scale}, seed ${options.seed} → ${file}`);
    const started = Date.now();
    await generate({ scale: options.scale, seed: options.seed }, file);
    log(`generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return file;
}

/**
 * SQLite: the imported database is cached per scale and seed (import once, as imported, no
 * ANALYZE); every run serves a fresh copy of it, so writes of one run never skew the next.
 */
async function sqliteDataset(
  options: BenchOptions,
  documentFile: string,
): Promise<Omit<Dataset, 'documentMb'>> {
  const base = join(CACHE_DIR, `scale-${options.scale}-seed-${options.seed}-sqlite`);
  const cached = `${base}.db`;
  const statsFile = `${base}.import.json`;
  const media = join(CACHE_DIR, 'media');
  let when: 'this run' | 'cached' = 'cached';
  if (!(await exists(cached)) || !(await exists(statsFile))) {
    const partial = `${base}.partial-${process.pid}.db`;
    await rm(partial, { force: true });
    log(`importing into SQLite (once; cached as ${cached})`);
    const stats = await importInChild(documentFile, `sqlite:${partial}`, media);
    await rename(partial, cached);
    await writeFile(statsFile, JSON.stringify(stats));
    when = 'this run';
  }
  const stats = JSON.parse(await readFile(statsFile, 'utf8')) as ImportStats;
  // one working copy per bench process, so two runs never share (or delete) each other's file
  const work = join(CACHE_DIR, `run-${process.pid}-sqlite.db`);
  for (const suffix of ['', '-wal', '-shm']) await rm(`${work}${suffix}`, { force: true });
  await copyFile(cached, work);
  return {
    dialect: 'sqlite',
    db: `sqlite:${work}`,
    media,
    documentFile,
    import: { ...stats, when },
    close: async () => {
      for (const suffix of ['', '-wal', '-shm']) await rm(`${work}${suffix}`, { force: true });
    },
  };
}

/** PostgreSQL: a database of the bench's own at the server of `--pg`, imported every run, dropped after. */
async function postgresDataset(
  options: BenchOptions,
  documentFile: string,
): Promise<Omit<Dataset, 'documentMb'>> {
  const admin = new pg.Client({ connectionString: options.pg! });
  await admin.connect();
  const name = `prodgraph_bench_${process.pid}`;
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(options.pg!);
  url.pathname = `/${name}`;
  const drop = async () => {
    const c = new pg.Client({ connectionString: options.pg! });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`).finally(() => c.end());
  };
  try {
    const media = join(CACHE_DIR, 'media');
    log(`importing into PostgreSQL database ${name}`);
    const stats = await importInChild(documentFile, url.toString(), media);
    return {
      dialect: 'postgres',
      db: url.toString(),
      media,
      documentFile,
      import: { ...stats, when: 'this run' },
      close: drop,
    };
  } catch (err) {
    await drop();
    throw err;
  }
}

export async function prepareDataset(options: BenchOptions): Promise<Dataset> {
  await mkdir(join(CACHE_DIR, 'media'), { recursive: true });
  const documentFile = await documentFor(options);
  const documentMb = Math.round((await stat(documentFile)).size / 1048576);
  const dataset = options.pg
    ? await postgresDataset(options, documentFile)
    : await sqliteDataset(options, documentFile);
  if (options.analyze) {
    const handle = openDatabase(parseDbTarget(dataset.db));
    await sql`analyze`.execute(handle.db).finally(() => handle.close());
    log('ANALYZE done');
  }
  return { ...dataset, documentMb };
}
