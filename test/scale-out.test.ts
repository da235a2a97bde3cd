import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEnv, type TestEnv } from './support/env.js';
import { smallProduction } from './support/fixtures.js';
import { startServer, type ServerProcess } from './support/server-process.js';

/*
 * Several prodgraph processes on one PostgreSQL database (bench/FINDINGS.md §4): each keeps its
 * own answer cache, filed under the production revision it reads with the key on every request,
 * so a change committed through one process is seen by the other on its very next request, and
 * so are a revoked key and a revoked grant. Two real server processes, one schema.
 */

const PG = process.env.PRODGRAPH_TEST_PG;

describe(
  'two server processes on one PostgreSQL database',
  { skip: PG ? false : 'PostgreSQL only (PRODGRAPH_TEST_PG)' },
  () => {
    let env: TestEnv;
    let a: ServerProcess;
    let b: ServerProcess;
    let admin: string;
    let vendor: string;
    let refs: Record<string, number>;

    const call = async (
      server: ServerProcess,
      method: string,
      path: string,
      token: string,
      body?: unknown,
    ) => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
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
      [a, b] = await Promise.all([startServer(env), startServer(env)]);
    });

    after(async () => {
      for (const s of [a, b]) {
        if (s && s.child.exitCode === null) {
          s.child.kill('SIGTERM');
          await s.exited;
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
