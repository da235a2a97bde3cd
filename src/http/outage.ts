import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { DbHandle } from '../db/index.js';

/**
 * A warning that recurs while something stays broken (the change watch and the webhook worker
 * look at the database every second or faster during an outage): logged the first time, then at
 * most once per `everyMs` with the number of repeats held back, so an outage of an hour is a
 * few dozen lines, not thousands.
 */
export function repeatedWarning(log: () => FastifyBaseLogger, message: string, everyMs = 30_000) {
  let last = 0;
  let held = 0;
  return (err: unknown): void => {
    const now = Date.now();
    if (now - last < everyMs) {
      held++;
      return;
    }
    log().warn({ err, ...(held ? { repeats: held } : {}) }, message);
    last = now;
    held = 0;
  };
}

/**
 * Surviving the database going away: the pool's lost connections are logged (they no longer end
 * the process: openDatabase), and every operation documents the 503 (database unavailable,
 * with Retry-After) and, for writes, the 507 (disk full) that the one error handler answers.
 */
async function outagePlugin(app: FastifyInstance, opts: { database: DbHandle }) {
  const lost = repeatedWarning(
    () => app.log,
    'a database connection was lost; it is replaced on the next query',
    5000,
  );
  const unsubscribe = opts.database.observe({ connectionLost: lost });
  app.addHook('onClose', async () => unsubscribe());
}

export const outage = fp(outagePlugin, { name: 'prodgraph-outage' });
