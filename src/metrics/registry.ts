import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/*
 * The service's metrics, in the Prometheus text format (prom-client). Every label takes values
 * from a small, fixed set — a route template, a method, a status, a query kind, a webhook
 * subscription id — never a token, a key, a person, a path or anything a client sends, so the
 * number of series stays bounded whatever the traffic. Each metric says how its series would
 * combine across several processes of one server, should their registries be merged with
 * prom-client's AggregatorRegistry (`aggregator`): counts and histograms add up; a figure read
 * from the shared database (a webhook's backlog) is the same in every process and is taken once.
 * test/metrics.test.ts merges two registries to check it.
 */

/** Seconds: from a cached answer (sub-millisecond) to a held long-poll (up to 30 s). */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds: an indexed lookup (tens of µs on SQLite) to a bulk statement. */
const QUERY_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
const WAIT_BUCKETS = [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];
const GROUP_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128];

export const METRIC_PREFIX = 'prodgraph_';

/**
 * Process metrics (CPU, memory, handles, GC, event-loop delay) are the process's, not an app's:
 * collected once per process into a registry of their own (tests build many apps in one
 * process), merged with the app's at each scrape.
 */
let processRegistry: Registry | undefined;
export function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 20 });
    // gauges named like counters, which Prometheus's own lint refuses; the same counts stay
    // available by type in nodejs_active_handles, nodejs_active_requests, nodejs_active_resources
    for (const misnamed of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ])
      processRegistry.removeSingleMetric(misnamed);
  }
  return processRegistry;
}

/** The instruments the service updates as it works; gauges read their sources at each scrape. */
export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'HTTP requests by route template, method and status: duration (its _count is the request count)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: `${METRIC_PREFIX}rate_limit_refusals_total`,
    help: 'Requests refused 429 for their rate, by route template',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly queries = new Histogram({
    name: `${METRIC_PREFIX}db_query_duration_seconds`,
    help: 'Database statements by kind (select, insert, update, delete, transaction, other) and outcome: duration, the wait for a connection excluded; on SQLite a write includes any wait for another process holding the write lock (prodgraph_db_busy_wait_seconds)',
    labelNames: ['kind', 'outcome'] as const,
    buckets: QUERY_BUCKETS,
    registers: [this.registry],
  });

  readonly poolWaits = new Histogram({
    name: `${METRIC_PREFIX}db_pool_wait_seconds`,
    help: 'PostgreSQL: how long a query or transaction waited for a connection of the pool, by outcome (failed: refused or timed out)',
    labelNames: ['outcome'] as const,
    buckets: WAIT_BUCKETS,
    registers: [this.registry],
  });

  readonly busyWaits = new Histogram({
    name: `${METRIC_PREFIX}db_busy_wait_seconds`,
    help: 'SQLite: how long a write waited for the write lock another process held (its busy wait), by outcome (failed: gave up with SQLITE_BUSY after the busy timeout); writes that found the lock free are not counted',
    labelNames: ['outcome'] as const,
    buckets: WAIT_BUCKETS,
    registers: [this.registry],
  });

  readonly connectionsLost = new Counter({
    name: `${METRIC_PREFIX}db_connections_lost_total`,
    help: 'PostgreSQL: idle connections the database ended (a restart, a cut network); each is replaced on demand',
    registers: [this.registry],
  });

  readonly storageRefusals = new Counter({
    name: `${METRIC_PREFIX}storage_refusals_total`,
    help: 'Requests refused because the database was unavailable (503) or the disk full (507)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly writes = new Counter({
    name: `${METRIC_PREFIX}writes_committed_total`,
    help: 'Writes committed through the write path (every API write that changes a production)',
    registers: [this.registry],
  });

  readonly groupSizes = new Histogram({
    name: `${METRIC_PREFIX}write_group_size`,
    help: 'Writes committed together in one transaction',
    buckets: GROUP_BUCKETS,
    registers: [this.registry],
  });

  readonly uploadsInFlight = new Gauge({
    name: `${METRIC_PREFIX}uploads_in_flight`,
    help: 'Files being received into the media store right now',
    registers: [this.registry],
  });

  readonly stagedBytes = new Gauge({
    name: `${METRIC_PREFIX}staged_bytes`,
    help: 'Bytes received and staged, waiting for their write to commit',
    registers: [this.registry],
  });

  readonly stagedBytesTotal = new Counter({
    name: `${METRIC_PREFIX}staged_bytes_total`,
    help: 'Bytes of files received into the media store',
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: `${METRIC_PREFIX}webhook_attempts_total`,
    help: 'Webhook delivery attempts made by this process, by subscription id and outcome (delivered, failed)',
    labelNames: ['webhook', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Where the text comes from instead, when the process is one worker of several (servePrimary). */
  private source: (() => Promise<string>) | null = null;

  /** The Prometheus text of the app's metrics and the process's, or of the whole server's. */
  async text(): Promise<string> {
    if (this.source) return this.source();
    return Registry.merge([processMetrics(), this.registry]).metrics();
  }

  /** Answers every scrape with `source` (a worker: the sum over every worker of its server). */
  serveFrom(source: () => Promise<string>): void {
    this.source = source;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** A gauge whose value is read when scraped. */
export function sampled(
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
  aggregator: 'sum' | 'max' = 'sum',
): Gauge {
  return new Gauge({
    name: `${METRIC_PREFIX}${name}`,
    help,
    registers: [registry],
    aggregator,
    collect() {
      this.set(read());
    },
  });
}

/** A counter whose running total lives elsewhere (a cache's own tally), read when scraped. */
export function tallied(registry: Registry, name: string, help: string, read: () => number): Counter {
  return new Counter({
    name: `${METRIC_PREFIX}${name}`,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
