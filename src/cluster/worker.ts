import { AggregatorRegistry } from 'prom-client';
import type { AppOptions, WorkerWiring } from '../app.js';
import type { Dialect } from '../db/index.js';
import { processMetrics } from '../metrics/registry.js';
import { PrimaryLink } from './link.js';
import type { MetricsAnswer } from './messages.js';
import { clusterRateStore } from './rate-limits.js';

/** Made once per worker process, for the listener prom-client adds with it. */
let listening: unknown;

/** The environment variable that numbers a worker (1…N); the primary sets it. */
export const WORKER_ID = 'PRODGRAPH_WORKER_ID';

/**
 * The app options of a worker process. Worker 1 delivers the webhooks (a lease per subscription
 * makes a second deliverer harmless, but one is enough); the primary serves the scrape listener
 * and settles staged media, so no worker does either. On SQLite commits are relayed to the
 * siblings by the link itself (relayCommits); PostgreSQL announces them to all.
 */
export function workerOptions(dialect: Dialect): { options: Partial<AppOptions>; link: PrimaryLink } {
  // PostgreSQL announces every commit to every process itself (CommitListener)
  const link = new PrimaryLink({ relayCommits: dialect === 'sqlite' });
  const first = process.env[WORKER_ID] === '1';
  const worker: WorkerWiring = {
    rateLimitStore: clusterRateStore(link),
    metrics(metrics) {
      // the primary's AggregatorRegistry asks every worker for these and sums them; a worker
      // answers once an AggregatorRegistry exists in it (its constructor adds the listener)
      AggregatorRegistry.setRegistries([processMetrics(), metrics.registry]);
      listening ??= new AggregatorRegistry();
      metrics.serveFrom(async () => {
        const answer = await link.ask<MetricsAnswer>({ prodgraph: 'metrics' });
        if (answer.text === undefined) throw new Error(answer.error ?? 'the primary sent no metrics');
        return answer.text;
      });
    },
  };
  return { options: { webhooks: first, metricsListener: false, worker }, link };
}
