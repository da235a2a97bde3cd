import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * wrk (C, one thread on the load core) as the load generator of the read routes: the fastest
 * Node.js answer (the bare Fastify control) outruns a JavaScript load generator on one core, so
 * with autocannon the control, not the server, would set the scale every ratio is read on.
 * Writes keep autocannon: their bodies are built per request and their rates are far below
 * what either generator can send.
 */
export const wrkInstalled = (): boolean => spawnSync('wrk', ['--version']).error === undefined;

/** Paths walked in turn, with the headers every request carries and any one path's own. */
export interface ReadPlan {
  paths: string[];
  headers: Record<string, string>;
  /** Extra headers per path, index for index (e.g. each scene's If-None-Match). */
  perPath?: Array<Record<string, string>>;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers that were neither 2xx nor 3xx. */
  failed: number;
  socketErrors: number;
}

const lua = (value: string) => JSON.stringify(value);
const table = (h: Record<string, string>) =>
  `{${Object.entries(h)
    .map(([k, v]) => `[${lua(k)}]=${lua(v)}`)
    .join(',')}}`;

/**
 * The script that walks the plan's paths in turn (wrk's `request` hook). Each path's headers are
 * the plan's with its own added: wrk.format takes a whole header table, not additions.
 */
function script(plan: ReadPlan): string {
  const headers = plan.paths.map((_, i) => table({ ...plan.headers, ...plan.perPath?.[i] }));
  return [
    `local paths = {${plan.paths.map(lua).join(',')}}`,
    `local headers = {${headers.join(',')}}`,
    'local n = 0',
    'request = function()',
    '  n = n + 1',
    '  local i = (n % #paths) + 1',
    '  return wrk.format("GET", paths[i], headers[i])',
    'end',
  ].join('\n');
}

/** wrk's time figures (`712.00us`, `1.20ms`, `2.01s`) in milliseconds. */
function ms(figure: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(figure);
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return { us: n / 1000, ms: n, s: n * 1000, m: n * 60_000 }[m[2] as 'us' | 'ms' | 's' | 'm'];
}

function parse(out: string): WrkResult {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  const done = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(out);
  const seconds = done ? ms(`${done[2]}${done[3]}`) / 1000 : 0;
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: Number(done?.[1] ?? 0),
    seconds,
    p50Ms: ms(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99Ms: ms(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    failed: num(/Non-2xx or 3xx responses: (\d+)/),
    socketErrors: socket ? socket.slice(1).reduce((s, v) => s + Number(v), 0) : 0,
  };
}

/** One wrk run of `plan` against `base`: one thread, `connections`, `seconds`, on `core` when pinned. */
export async function runWrk(
  base: string,
  plan: ReadPlan,
  options: { connections: number; seconds: number; pin: (argv: string[]) => string[] },
): Promise<WrkResult> {
  const dir = await mkdtemp(join(tmpdir(), 'prodgraph-wrk-'));
  try {
    const file = join(dir, 'plan.lua');
    await writeFile(file, script(plan));
    const argv = options.pin([
      'wrk',
      '-t1',
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--timeout',
      '30s',
      '--latency',
      '-s',
      file,
      base,
    ]);
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}`))));
    });
    return parse(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
