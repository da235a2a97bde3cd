import type { Timeouts } from '../config.js';

/*
 * How long a slow or stalled client may hold a connection (the README's Configuration lists the
 * settings). Node enforces the headers and request timeouts only when it looks over its
 * connections, every `connectionsCheckingInterval` (30 s unless told otherwise), so a client is
 * cut at the first look after its time is up: with a look every few seconds, a client was cut
 * well after its documented timeout, and later still on a loaded machine. Looking every
 * twentieth of the shorter timeout (at most every second, at least every 50 ms) keeps the cut
 * within 5% of the documented figure; the look itself walks the open connections in C++, cheap
 * even for thousands.
 */

/** The shortest and longest pause between two looks at the open connections. */
const CHECK_MS = { min: 50, max: 1000 };

/** The Fastify server options that hold every connection to `timeouts`. */
export function serverTimeouts(timeouts: Timeouts) {
  const headersTimeout = Math.min(timeouts.headersMs, timeouts.requestMs);
  return {
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout,
      connectionsCheckingInterval: Math.max(
        CHECK_MS.min,
        Math.min(CHECK_MS.max, Math.floor(headersTimeout / 20)),
      ),
    },
  };
}
