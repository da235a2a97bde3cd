import type { FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import fp from 'fastify-plugin';

/** Headers a browser may send and read across origins, when CORS is configured. */
const CORS_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-None-Match',
  'If-Range',
  'Range',
];
const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Content-Range',
  'Content-Disposition',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Idempotent-Replayed',
  'WWW-Authenticate',
];

/**
 * Headers every answer carries: `nosniff`, so nothing a user uploaded is ever run as something
 * else. Media responses add their own (mediaAnswerHeaders), token-bearing answers
 * `Cache-Control: no-store` (their routes), and /docs its content security policy
 * (openApi). CORS is off unless origins are configured, and then only those
 * exact origins are answered: keys travel in a header, and the console's session cookie serves
 * the console's own origin only, so no credentials mode (another origin never reads as a session).
 */
async function securityHeadersPlugin(app: FastifyInstance, opts: { corsOrigins: readonly string[] }) {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
  });
  if (opts.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: [...opts.corsOrigins],
      methods: ['GET', 'POST'],
      allowedHeaders: CORS_REQUEST_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      credentials: false,
      maxAge: 600,
      // a preflight is answered by the plugin's hook, before routing: no OPTIONS route is added
      hideOptionsRoute: true,
    });
  }
}

export const securityHeaders = fp(securityHeadersPlugin, {
  name: 'prodgraph-security-headers',
  // CORS's onRequest hook runs after the key and rate-limit hooks (a 401 or 429 carries no
  // CORS header), and its preflight route is rate-limited like every route
  dependencies: ['prodgraph-rate-limit'],
});
