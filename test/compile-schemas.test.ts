import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { buildApp } from '../src/app.js';
import type { CompileSchemas } from '../src/http/compile-schemas.js';
import { serializerBuilder } from '../src/http/serializer.js';
import { strictValidatorBuilder } from '../src/http/validator.js';
import { createEnv, DIALECTS, type TestEnv } from './support/env.js';

/*
 * A route's validators and serializers are compiled when it first needs them, so a server starts
 * without compiling answers it may never send. What that gives up is a broken schema stopping
 * the start-up; an app built with every schema compiled at start is the proof that none is.
 */

/** A bare server with the app's compilers and one route whose answer schema cannot compile. */
function withBrokenAnswer(when: CompileSchemas) {
  const app = Fastify({
    schemaController: {
      compilersFactory: {
        buildValidator: strictValidatorBuilder(when),
        buildSerializer: serializerBuilder(when),
      },
    },
  });
  app.get('/broken', { schema: { response: { 200: { type: 'object', $ref: '#/nowhere' } } } }, () => ({}));
  app.get('/fine', { schema: { response: { 200: { type: 'object' } } } }, () => ({ ok: true }));
  // not returned from an async function: a Fastify instance is a thenable, and would be started
  return app;
}

describe('validators and serializers compiled on first use', () => {
  it('at start a broken schema stops the app; on first use only its route fails', async () => {
    await assert.rejects(async () => {
      await withBrokenAnswer('start').ready();
    });
    const app = withBrokenAnswer('first-use');
    await app.ready();
    assert.equal((await app.inject('/fine')).statusCode, 200, 'the rest of the app serves');
    assert.equal((await app.inject('/broken')).statusCode, 500);
    await app.close();
  });
});

for (const dialect of DIALECTS) {
  describe(`every route's schemas compile [${dialect}]`, () => {
    let env: TestEnv;
    before(async () => {
      env = await createEnv(dialect);
    });
    after(() => env?.close());

    it('an app built with every validator and serializer compiled at start starts and serves', async () => {
      const app = await buildApp({
        config: env.config,
        database: env.handle,
        store: env.store,
        logger: false,
        compileSchemas: 'start',
      });
      try {
        assert.equal((await app.inject('/healthz')).statusCode, 200);
      } finally {
        await app.close();
      }
    });
  });
}
