import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';

/**
 * Once the server is closing (SIGTERM/SIGINT, src/server.ts), a request that had not yet been
 * routed is refused in the catalogue's words — 503 `{detail, code: "unavailable"}`, with
 * `Connection: close` and `Retry-After` — instead of Fastify's own 503 body. Requests already
 * being handled finish.
 */
async function shutdownPlugin(app: FastifyInstance) {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw new AppError(503, 'the server is shutting down; retry in a moment', { 'retry-after': '5' });
  });
}

export const shutdownRefusal = fp(shutdownPlugin, { name: 'prodgraph-shutdown' });
