import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { auth } from '../src/auth/route-hook.js';
import { HTTP_LAYER } from '../src/http/layer.js';
import { rateLimits } from '../src/http/rate-limit.js';
import { requestRules } from '../src/http/request-rules.js';
import { shutdownRefusal } from '../src/http/shutdown.js';
import { mcp } from '../src/mcp/routes.js';
import { createEnv } from './support/env.js';

/** The error a bare app gives at start-up with `register` called on it, or null when it starts. */
async function startError(register: (app: ReturnType<typeof Fastify>) => void): Promise<string | null> {
  const app = Fastify();
  register(app);
  try {
    await app.ready();
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await app.close().catch(() => undefined);
  }
}

describe('plugin order', () => {
  it('the built app registers every plugin of the HTTP layer', async () => {
    const env = await createEnv('sqlite');
    try {
      for (const name of HTTP_LAYER) assert.ok(env.app.hasPlugin(name), name);
    } finally {
      await env.close();
    }
  });

  it('a plugin registered before one it must follow stops the start, naming what is missing', async () => {
    const db = null as never;
    assert.match(
      (await startError((app) => app.register(auth, { db }))) ?? '',
      /'prodgraph-shutdown' of plugin 'prodgraph-auth' is not registered/,
    );
    assert.match(
      (await startError((app) => {
        app.register(shutdownRefusal);
        app.register(rateLimits, { config: { max: 10, windowMs: 1000 }, db, dialect: 'sqlite' });
      })) ?? '',
      /'prodgraph-auth' of plugin 'prodgraph-rate-limit' is not registered/,
    );
    assert.match(
      (await startError((app) => app.register(requestRules))) ?? '',
      /'prodgraph-openapi' of plugin 'prodgraph-request-rules' is not registered/,
    );
    assert.match(
      (await startError((app) => app.register(mcp))) ?? '',
      /of plugin 'prodgraph-mcp' is not registered/,
    );
  });
});
