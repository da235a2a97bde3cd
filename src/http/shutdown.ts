import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts the drain before a graceful stop (serve): /healthz answers 503, everything else is still served. */
    drain(): void;
    /** True from drain() on: a balancer's health check is told to send requests elsewhere. */
    readonly draining: boolean;
  }
}

/**
 * How a server stops without losing a request (serve). First it drains: it serves as
 * before, but /healthz answers 503 (healthRoutes) so a balancer stops sending it
 * requests, and every answer closes its connection (`Connection: close`) so no client or
 * balancer keeps one open to a server about to go. Then it closes: a request that had not yet
 * been routed is refused in the catalogue's words, 503 `{detail, code: "unavailable"}` with
 * `Connection: close` and `Retry-After`, instead of Fastify's own 503 body; requests already
 * being handled finish, held long-polls answer the page they have.
 */
async function shutdownPlugin(app: FastifyInstance) {
  let closing = false;
  let draining = false;
  app.decorate('drain', () => {
    draining = true;
  });
  app.decorate('draining', {
    getter: () => draining,
  });
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw new AppError(503, 'the server is shutting down; retry in a moment', { 'retry-after': '5' });
  });
  // at answer time, so a long-poll held since before the drain closes its connection too
  app.addHook('onSend', async (_request, reply, payload) => {
    if (draining || closing) reply.header('connection', 'close');
    return payload;
  });
}

export const shutdownRefusal = fp(shutdownPlugin, { name: 'prodgraph-shutdown' });
