import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:net';
import { cliArgv } from './built.js';
import type { TestEnv } from './env.js';

/** A real server process on a database a test prepared (the one place tests spawn). */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Every line the process wrote to stdout and stderr. */
  output: string[];
  /** The first line written that matches, waiting for it (a log line comes in the server's next batch). */
  lineMatching(match: (line: string) => boolean, what: string, withinMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** The database URL or path of a test env, for another process (PostgreSQL: the env's own schema). */
export function dbArgOf(env: TestEnv): string {
  if (env.config.db.dialect === 'sqlite') return env.config.db.path;
  const url = new URL(env.config.db.url);
  url.searchParams.set('options', `-c search_path=${env.schema!}`);
  return url.toString();
}

export async function startServer(
  env: TestEnv,
  extraEnv: Record<string, string> = {},
  options: { db?: string; port?: number } = {},
): Promise<ServerProcess> {
  // a given port: the same server started again where a balancer expects it
  const port = options.port ?? (await freePort());
  const workers = Number(extraEnv.PRODGRAPH_WORKERS ?? '1');
  const child = spawn(
    process.execPath,
    [
      ...(await cliArgv()),
      'serve',
      '--db',
      options.db ?? dbArgOf(env),
      '--media',
      env.config.mediaDir,
      '--port',
      String(port),
    ],
    {
      // one process unless a test asks for workers (the default on PostgreSQL is one per core);
      // stopped at once unless a test asks for a drain (test/shutdown.test.ts)
      env: {
        ...process.env,
        PRODGRAPH_LOG_LEVEL: 'info',
        PRODGRAPH_WORKERS: '1',
        PRODGRAPH_DRAIN_MS: '0',
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  const written = new EventEmitter();
  const lineMatching = async (match: (line: string) => boolean, what: string, withinMs = 30_000) => {
    const waiting = AbortSignal.timeout(withinMs);
    for (;;) {
      const line = output.find(match);
      if (line !== undefined) return line;
      await once(written, 'line', { signal: waiting }).catch(() => {
        throw new Error(`no line for ${what} within ${withinMs} ms among:\n${output.slice(-20).join('\n')}`);
      });
    }
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (line) output.push(line);
        if (line) written.emit('line');
        // one process says it listens; the primary of several says so once every worker does
        if (line.includes(workers > 1 ? 'serving with' : 'Server listening at')) resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) =>
      reject(new Error(`server exited (${code}) before listening:\n${output.join('\n')}`)),
    );
  });
  await ready;
  return { child, url: `http://127.0.0.1:${port}`, port, output, lineMatching, exited };
}
