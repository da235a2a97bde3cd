import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createEnv, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';

/*
 * Several prodgraph processes on one PostgreSQL database (bench/FINDINGS.md §4): each keeps its
 * own answer cache, filed under the production revision it reads with the key on every request,
 * so a change committed through one process is seen by the other on its very next request, and
 * so are a revoked key and a revoked grant. Two real server processes, one schema.
 */

const PG = process.env.PRODGRAPH_TEST_PG;
const CLI = ['--import', 'tsx', join(import.meta.dirname, '..', 'src', 'cli.ts')];

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

interface Server {
  base: string;
  child: ChildProcess;
}

async function startServer(url: string, media: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...CLI, 'serve', '--db', url, '--media', media, '--port', String(port)],
    {
      env: { ...process.env, PRODGRAPH_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { base, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error(`server did not become ready: ${stderr}`);
}

describe(
  'two server processes on one PostgreSQL database',
  { skip: PG ? false : 'PostgreSQL only (PRODGRAPH_TEST_PG)' },
  () => {
    let env: TestEnv;
    let a: Server;
    let b: Server;
    let admin: string;
    let vendor: string;
    let refs: Record<string, number>;

    const call = async (server: Server, method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(`${server.base}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };

    before(async () => {
      env = await createEnv('postgres');
      ({ refs } = await env.import(smallProduction('film')));
      admin = await env.mint({ production: 'film', scopes: ['read', 'write', 'admin'] });
      vendor = await env.mint({ production: 'film', engagement: 'eng-pix', scopes: ['read'] });
      const url = new URL(PG!);
      url.searchParams.set('options', `-c search_path=${env.schema}`);
      [a, b] = await Promise.all([
        startServer(url.toString(), join(env.dir, 'media')),
        startServer(url.toString(), join(env.dir, 'media')),
      ]);
    });

    after(async () => {
      for (const s of [a, b]) {
        if (s && s.child.exitCode === null) {
          s.child.kill('SIGTERM');
          await once(s.child, 'exit');
        }
      }
      await env?.close();
    });

    it('a write through one is read through the other at once', async () => {
      const before = (await call(b, 'GET', '/production', admin)).body.stats.nodes;
      assert.equal((await call(b, 'GET', '/production', admin)).body.stats.nodes, before, 'kept by b');
      const created = await call(a, 'POST', '/assets', admin, { label: 'Flare gun' });
      assert.equal(created.status, 201);
      assert.equal((await call(b, 'GET', '/production', admin)).body.stats.nodes, before + 1);
    });

    it('a key revoked through one is refused by the other on the very next request', async () => {
      const key = await env.mint({ production: 'film', scopes: ['read'] });
      assert.equal((await call(b, 'GET', '/production', key)).status, 200);
      const keys = (await call(a, 'GET', '/admin/keys', admin)).body as Array<{ id: number; prefix: string }>;
      const id = keys.find((k) => key.startsWith(k.prefix))!.id;
      assert.equal((await call(a, 'POST', `/admin/keys/${id}/revoke`, admin)).status, 200);
      assert.equal((await call(b, 'GET', '/production', key)).status, 401);
    });

    it('a grant revoked through one is refused by the other on the very next request', async () => {
      const path = `/bundles/scene/${refs.sc1}`;
      assert.equal((await call(b, 'GET', path, vendor)).status, 200);
      assert.equal((await call(b, 'GET', path, vendor)).status, 200, 'kept by b');
      const grants = (await call(a, 'GET', '/admin/grants', admin)).body as Array<{
        id: number;
        kind: string;
        node_id: number | null;
      }>;
      const grant = grants.find((g) => g.kind === 'scene' && g.node_id === refs.sc1)!;
      assert.equal((await call(a, 'POST', `/admin/grants/${grant.id}/revoke`, admin)).status, 200);
      assert.equal((await call(b, 'GET', path, vendor)).status, 404);
    });
  },
);
