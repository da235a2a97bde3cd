import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { randomBytes } from 'node:crypto';

import { printTo } from '../../src/cli/args.js';
import { describeFailure, run } from '../../src/cli/main.js';
import { cliArgv } from './built.js';

const exec = promisify(execFile);

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `prodgraph …` as a user runs it: a process of its own, its exit code, stdout and stderr. For
 * what only a process shows (another process beside a running server, the real exit code).
 */
export async function prodgraph(args: string[], env: Record<string, string>): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...(await cliArgv()), ...args], {
      env: { ...process.env, PRODGRAPH_DB: '', PRODGRAPH_MEDIA: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * `prodgraph …` in this process, exactly as src/cli.ts runs it (a failure prints one line and
 * exits 1), without the start-up cost of a process per call.
 */
export async function prodgraphHere(args: string[], env: Record<string, string>): Promise<Run> {
  const saved = { db: process.env.PRODGRAPH_DB, media: process.env.PRODGRAPH_MEDIA };
  const chunks: string[] = [];
  process.env.PRODGRAPH_DB = env.PRODGRAPH_DB;
  process.env.PRODGRAPH_MEDIA = env.PRODGRAPH_MEDIA;
  const restore = printTo((text) => chunks.push(text));
  try {
    await run(args);
    return { code: 0, stdout: chunks.join(''), stderr: '' };
  } catch (err) {
    return { code: 1, stdout: chunks.join(''), stderr: `prodgraph: ${describeFailure(err)}\n` };
  } finally {
    restore();
    for (const [k, v] of [
      ['PRODGRAPH_DB', saved.db],
      ['PRODGRAPH_MEDIA', saved.media],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

export interface CliTarget {
  name: string;
  /** A database URL of its own (a fresh PostgreSQL schema, or a SQLite file in `dir`). */
  db(dir: string, tag: string): Promise<string>;
  teardown(): Promise<void>;
}

const admin = async (q: string) => {
  const c = new pg.Client({ connectionString: process.env.PRODGRAPH_TEST_PG });
  await c.connect();
  await c.query(q).finally(() => c.end());
};

/** SQLite always; PostgreSQL too when PRODGRAPH_TEST_PG is set (a schema per database asked for). */
export function cliTargets(): CliTarget[] {
  const out: CliTarget[] = [
    { name: 'sqlite', db: async (dir, tag) => `sqlite:${join(dir, `${tag}.db`)}`, teardown: async () => {} },
  ];
  const url = process.env.PRODGRAPH_TEST_PG;
  if (url) {
    const schemas: string[] = [];
    out.push({
      name: 'postgres',
      async db(_dir, tag) {
        const schema = `cli_${tag}_${randomBytes(4).toString('hex')}`;
        await admin(`create schema ${schema}`);
        schemas.push(schema);
        const sep = url.includes('?') ? '&' : '?';
        return `${url}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      },
      async teardown() {
        for (const s of schemas) await admin(`drop schema ${s} cascade`);
      },
    });
  }
  return out;
}
