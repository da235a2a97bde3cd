import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';
import type { RateLimitConfig } from '../config.js';
import type { Db, Dialect } from '../db/index.js';
import { errors } from '../errors.js';
import { leasingStore } from './rate-leases.js';

/** A @fastify/rate-limit store (a class the plugin instantiates). */
export type RateStore = ReturnType<typeof leasingStore>;

/**
 * Where windows are counted: in the database on PostgreSQL (every process and host on it shares
 * them; each process takes counts in blocks, see leasingStore), in the server's primary
 * process for the workers of one SQLite server (clusterRateStore), in this process's memory
 * otherwise (the plugin's own store).
 */
function storeOf(opts: { db: Db; dialect: Dialect; store?: RateStore }): { store?: RateStore } {
  if (opts.dialect === 'postgres') return { store: leasingStore(opts.db) };
  return opts.store ? { store: opts.store } : {};
}

/** A key's own window when the request carried one; the client's address otherwise. */
export const rateLimitKey = (request: FastifyRequest): string =>
  request.principal ? `key:${request.principal.keyId}` : `ip:${request.ip}`;

/**
 * The limit of a route that no key authenticates but a credential of a key opens (the media
 * file route's ticket): counted per that key, in a window of the route's own, so a ticket's
 * fetches never spend the key's API allowance nor another key's. A request whose credential
 * names no key (a forged, mangled or missing ticket) is refused before any key is known and is
 * not counted: refusals never fill a window, so nobody can lock another client out by sending
 * bad credentials from its address (or, behind a proxy, from everyone's). Empty when limits are off.
 */
export function perCredentialKey(
  config: RateLimitConfig,
  name: string,
  keyIdOf: (request: FastifyRequest) => number | null,
): {
  rateLimit?: { keyGenerator: (r: FastifyRequest) => string; allowList: (r: FastifyRequest) => boolean };
} {
  if (config.max === null) return {};
  return {
    rateLimit: {
      keyGenerator: (request) => `${name}:key:${keyIdOf(request) ?? 'none'}`,
      allowList: (request) => keyIdOf(request) === null,
    },
  };
}

/**
 * Per-key request limits on every route (beyond the contract). The limit is counted after the
 * key is authenticated (the route's own onRequest hook runs after the auth hook), so nobody can
 * spend another key's allowance; requests refused before that (401, 403) are not counted. On
 * PostgreSQL the counters live in the database, shared by every process (taken in blocks, see
 * leasingStore); on SQLite they live in memory, the primary's when the server runs several
 * workers (see storeOf). Routes may set their own `config.rateLimit` (the vision mints) or
 * `false` (health checks).
 */
async function rateLimitPlugin(
  app: FastifyInstance,
  opts: { config: RateLimitConfig; db: Db; dialect: Dialect; store?: RateStore },
) {
  const { max, windowMs } = opts.config;
  await app.register(rateLimit, {
    global: max !== null,
    max: max ?? 0,
    timeWindow: windowMs,
    hook: 'onRequest',
    enableDraftSpec: true,
    keyGenerator: rateLimitKey,
    ...storeOf(opts),
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return errors.tooManyRequests(
        `this key may make at most ${context.max} requests per ${Math.round(windowMs / 1000)} s; retry in ${seconds} s`,
        seconds,
      );
    },
  });
}

export const rateLimits = fp(rateLimitPlugin, {
  name: 'prodgraph-rate-limit',
  // counted per authenticated key: its onRequest hook runs after the auth hook's; the
  // reference's routes, registered before it, are never limited
  dependencies: ['prodgraph-auth', 'prodgraph-openapi'],
});
