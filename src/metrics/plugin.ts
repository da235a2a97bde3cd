import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import { Type } from 'typebox';
import { commitNewsOf } from '../db/change-signal.js';
import { storageFailure } from '../db/failures.js';
import type { Db, DbHandle } from '../db/index.js';
import { METRIC_PREFIX, Metrics, sampled, tallied } from './registry.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's Prometheus metrics (Metrics). */
    metrics: Metrics;
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A statement's kind from its first word: a label of six values, never the statement. */
export function queryKind(sql: string): string {
  const word = /^\s*\(?\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase() ?? '';
  if (word === 'select' || word === 'insert' || word === 'update' || word === 'delete') return word;
  if (['begin', 'commit', 'rollback', 'savepoint', 'release', 'start'].includes(word)) return 'transaction';
  return 'other';
}

/** The route template a request matched (`/api/v1/assets/:node_id`), never the path it asked for. */
const routeOf = (request: FastifyRequest): string => request.routeOptions?.url ?? '(unmatched)';

/** A subscription's undelivered changes, for the metrics. */
export interface Backlog {
  webhookId: number;
  /** Changes after its cursor it will deliver, counted up to the cap. */
  pending: number;
  /** When the oldest of them was made; null when there is none. */
  oldestAt: string | null;
}

/**
 * Reads the backlogs of the first `maxSubscriptions` active subscriptions, each counted up to
 * `cap`: the app passes the webhooks' own (deliveryBacklogs).
 */
export type BacklogReader = (db: Db, cap: number, maxSubscriptions: number) => Promise<Backlog[]>;

/** Subscriptions reported per scrape, and the backlog count each stops at. */
const BACKLOG_SUBSCRIPTIONS = 200;
const BACKLOG_CAP = 100_000;

function watchDatabase(metrics: Metrics, database: DbHandle): () => void {
  const { registry } = metrics;
  const pool = database.poolStats();
  if (pool) {
    new Gauge({
      name: `${METRIC_PREFIX}db_pool_connections`,
      help: 'PostgreSQL: the pool’s open connections by state (idle, busy), and queries waiting for one (waiting)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const s = database.poolStats();
        if (!s) return;
        this.set({ state: 'idle' }, s.idle);
        this.set({ state: 'busy' }, s.total - s.idle);
        this.set({ state: 'waiting' }, s.waiting);
      },
    });
    sampled(registry, 'db_pool_max', 'PostgreSQL: the most connections the pool opens', () => pool.max);
  }
  return database.observe({
    query: (sql, ms, failed) =>
      metrics.queries.observe({ kind: queryKind(sql), outcome: failed ? 'failed' : 'ok' }, ms / 1000),
    poolWait: (ms, failed) => metrics.poolWaits.observe({ outcome: failed ? 'failed' : 'ok' }, ms / 1000),
    busyWait: (ms, acquired) => metrics.busyWaits.observe({ outcome: acquired ? 'ok' : 'failed' }, ms / 1000),
    connectionLost: () => metrics.connectionsLost.inc(),
    committed: (size) => {
      metrics.writes.inc(size);
      metrics.groupSizes.observe(size);
    },
  });
}

function watchApp(app: FastifyInstance, metrics: Metrics, deliveryBacklogs: BacklogReader): void {
  const { registry } = metrics;
  const answers = app.answers;
  sampled(registry, 'answer_cache_bytes', 'Bytes of assembled answers kept in memory', () => answers.bytes);
  sampled(registry, 'answer_cache_entries', 'Assembled answers kept in memory', () => answers.entries);
  tallied(registry, 'answer_cache_hits_total', 'Answers sent from memory', () => answers.stats.hits);
  tallied(registry, 'answer_cache_misses_total', 'Answers assembled afresh', () => answers.stats.misses);
  tallied(
    registry,
    'answer_cache_evictions_total',
    'Cached answers pushed out to make room (the memory budget is too small if this climbs)',
    () => answers.stats.evictions,
  );
  sampled(
    registry,
    'change_feed_waiters',
    'Change-feed long-polls held open, waiting for a change',
    () => app.ctx.changes.waiting,
  );
  if (app.ctx.dialect === 'postgres') {
    sampled(
      registry,
      'commit_listener_up',
      'PostgreSQL: 1 while this process hears commits on its listening connection, 0 while it polls for them instead (summed over the workers)',
      () => (commitNewsOf(app.ctx.db)?.listening ? 1 : 0),
    );
  }
  // one look at the database per scrape fills both webhook gauges; the database away: no
  // figures rather than no metrics at all
  const backlogs = lastFor(100, () =>
    deliveryBacklogs(app.ctx.db, BACKLOG_CAP, BACKLOG_SUBSCRIPTIONS).catch(() => []),
  );
  const perWebhook = (name: string, help: string, value: (r: Backlog, now: number) => number) =>
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames: ['webhook'] as const,
      registers: [registry],
      // read from the shared database: every worker reports the same figure
      aggregator: 'max',
      async collect() {
        const rows = await backlogs();
        const now = Date.now();
        this.reset();
        for (const r of rows) this.set({ webhook: String(r.webhookId) }, value(r, now));
      },
    });
  perWebhook(
    'webhook_backlog',
    `Changes each active webhook subscription has yet to deliver (counted up to ${BACKLOG_CAP})`,
    (r) => r.pending,
  );
  perWebhook(
    'webhook_oldest_undelivered_seconds',
    'Age of the oldest change each active webhook subscription has yet to deliver (0: none)',
    (r, now) => (r.oldestAt ? Math.max(0, (now - Date.parse(r.oldestAt)) / 1000) : 0),
  );
}

/** `load`'s answer, shared by every caller within `ms` of the first (the gauges of one scrape). */
function lastFor<T>(ms: number, load: () => Promise<T>): () => Promise<T> {
  let kept: { at: number; value: Promise<T> } | null = null;
  return () => {
    const now = Date.now();
    if (!kept || now - kept.at > ms) kept = { at: now, value: load() };
    return kept.value;
  };
}

/**
 * Counts every request, query and write, and serves GET /metrics to a `metrics` key (the
 * loopback scrape listener is metricsListener). Registered before the routes, after
 * `ctx` and `answers` are decorated.
 */
async function metricsPlugin(
  app: FastifyInstance,
  opts: { database: DbHandle; metrics: Metrics; backlogs: BacklogReader },
) {
  const { metrics } = opts;
  app.decorate('metrics', metrics);
  const unobserve = watchDatabase(metrics, opts.database);
  app.addHook('onClose', async () => unobserve());
  watchApp(app, metrics, opts.backlogs);

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = routeOf(request);
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    metrics.requests.observe({ method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    if (reply.statusCode === 429) metrics.rateLimited.inc({ route });
    done();
  });
  app.addHook('onError', async (_request, _reply, err) => {
    const failure = storageFailure(err);
    if (failure)
      metrics.storageRefusals.inc({ reason: failure === 'full' ? 'disk_full' : 'database_unavailable' });
  });

  app.get(
    '/metrics',
    {
      config: { auth: { scopes: ['metrics'], surface: 'production' } },
      schema: {
        summary: 'The service’s metrics, in the Prometheus text format',
        description:
          'Requests by route template, method and status; the answer cache; database queries, pool waits (PostgreSQL), busy waits (SQLite) and lost connections; writes committed and group sizes; change-feed waiters; webhook backlogs, attempts and the oldest undelivered change per subscription; rate-limit refusals; uploads in flight and bytes staged; process and event-loop metrics. Server-wide, whatever the key’s production: mint a `metrics` key for the scraper only. A scraper usually reads them without a key on the loopback listener `PRODGRAPH_METRICS_PORT` opens. No label ever holds a key, a person or a path.',
        tags: ['service'],
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: Type.String() } },
          },
        },
      },
    },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()),
  );
}

export const metricsRoutes = fp(metricsPlugin, {
  name: 'prodgraph-metrics',
  // the scrape route answers an outage's 503 like every route; the gauges read ctx and answers
  dependencies: ['prodgraph-outage'],
  decorators: { fastify: ['ctx', 'answers'] },
});
