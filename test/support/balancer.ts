import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './server-process.js';

/** deploy/haproxy.cfg: the configuration docs/operations.md shows, run as it is by the balancer test. */
export const HAPROXY_CONFIG = join(import.meta.dirname, '..', '..', 'deploy', 'haproxy.cfg');

/** The haproxy binary on PATH, or null (Debian's `haproxy` package installs /usr/sbin/haproxy). */
export function haproxyBinary(): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin']) {
    const path = join(dir, 'haproxy');
    if (dir && spawnSync(path, ['-v'], { stdio: 'ignore' }).status === 0) return path;
  }
  return null;
}

export interface Balancer {
  child: ChildProcess;
  url: string;
  socket: string;
  output: string[];
  /** Each server's state as HAProxy sees it (`UP`, `DOWN`, `MAINT`, `UP 1/2`, …), by name (s1, s2, s3). */
  states(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

/** Runs `haproxy -db -f deploy/haproxy.cfg` with the servers' addresses in its environment. */
export async function startBalancer(binary: string, ports: number[], dir: string): Promise<Balancer> {
  const port = await freePort();
  const socket = join(dir, 'haproxy.sock');
  const env: Record<string, string> = {
    PRODGRAPH_LISTEN: `127.0.0.1:${port}`,
    PRODGRAPH_HAPROXY_SOCKET: socket,
  };
  ports.forEach((p, i) => (env[`PRODGRAPH_SERVER_${i + 1}`] = `127.0.0.1:${p}`));
  const child = spawn(binary, ['-db', '-f', HAPROXY_CONFIG], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const onData = (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const states = async () => parseStates(await ask(socket, 'show stat'));
  const balancer: Balancer = {
    child,
    url: `http://127.0.0.1:${port}`,
    socket,
    output,
    states,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  // listening once its stats socket answers
  const end = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${output.join('\n')}`);
    if (
      await states().then(
        () => true,
        () => false,
      )
    )
      return balancer;
    if (Date.now() > end) throw new Error(`haproxy did not start:\n${output.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One command on HAProxy's runtime socket, its whole answer. */
function ask(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const c = connect(socket);
    c.on('connect', () => c.end(`${command}\n`));
    c.on('data', (d: Buffer) => chunks.push(d));
    c.on('error', reject);
    c.on('close', () => resolve(Buffer.concat(chunks).toString()));
  });
}

function parseStates(csv: string): Record<string, string> {
  const [head, ...rows] = csv.split('\n').filter(Boolean);
  if (!head?.startsWith('# ')) throw new Error(`not a stat answer: ${csv.slice(0, 200)}`);
  const cols = head.slice(2).split(',');
  const [px, sv, status] = ['pxname', 'svname', 'status'].map((c) => cols.indexOf(c));
  const out: Record<string, string> = {};
  for (const row of rows) {
    const f = row.split(',');
    if (f[px!] === 'prodgraph' && !['FRONTEND', 'BACKEND'].includes(f[sv!]!)) out[f[sv!]!] = f[status!]!;
  }
  return out;
}

/**
 * Which of `pids` holds the TCP connection whose local end is 127.0.0.1:`port` (the process a
 * webhook delivery came from, by the port the receiver saw): the socket's inode in
 * /proc/net/tcp, found among each process's open files.
 */
export function pidOwningPort(port: number, pids: number[]): number | null {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === local) inodes.add(f[9]!);
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}
