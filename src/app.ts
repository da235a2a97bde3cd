import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import multipart from '@fastify/multipart';
import fp from 'fastify-plugin';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { SigningSecrets } from './auth/signing-secrets.js';
import { openAndMigrate, type DbHandle } from './db/index.js';
import { AnswerCache } from './http/answer-cache.js';
import { auth } from './auth/route-hook.js';
import { compression } from './http/compression.js';
import { clientError, frameworkError, installErrorHandling } from './http/error-handler.js';
import { HTTP_LAYER } from './http/layer.js';
import { API_PREFIX, openApi } from './http/openapi.js';
import { FileMediaStore, type MediaStore } from './media/store.js';
import { healthRoutes } from './modules/health/routes.js';
import { productionRoutes } from './modules/production/routes.js';
import { departmentRoutes } from './modules/departments/routes.js';
import { sceneRoutes } from './modules/scenes/routes.js';
import { assetRoutes } from './modules/assets/routes.js';
import { scheduleRoutes } from './modules/schedule/routes.js';
import { deliveryRoutes } from './modules/deliveries/routes.js';
import { approvalRoutes } from './modules/approvals/routes.js';
import { scriptChangeRoutes } from './modules/script-changes/routes.js';
import { activityRoutes } from './modules/activity/routes.js';
import { jobRoutes } from './modules/jobs/routes.js';
import { peopleRoutes } from './modules/people/routes.js';
import { mediaFileRoutes, mediaTicketRoutes } from './modules/media-ticket/routes.js';
import { assetWriteRoutes } from './modules/asset-writes/routes.js';
import { approvalDecideRoutes } from './modules/approval-decisions/routes.js';
import { installJsonParser } from './http/json-body.js';
import { loggerOptions, RequestLog } from './http/logging.js';
import { outage, repeatedWarning } from './http/outage.js';
import { metricsListener } from './metrics/listener.js';
import { metricsRoutes } from './metrics/plugin.js';
import { Metrics } from './metrics/registry.js';
import { measuredStore } from './metrics/store.js';
import { rateLimits, type RateStore } from './http/rate-limit.js';
import { securityHeaders } from './http/security-headers.js';
import { shutdownRefusal } from './http/shutdown.js';
import { requestRules } from './http/request-rules.js';
import { requestBody } from './http/request-body.js';
import { routeTable } from './http/route-table.js';
import { strictValidatorBuilder } from './http/validator.js';
import { serializerBuilder } from './http/serializer.js';
import type { CompileSchemas } from './http/compile-schemas.js';
import { serverTimeouts } from './http/timeouts.js';
import { storageEventRoutes } from './modules/storage-events/routes.js';
import { mediaProxyRoutes } from './modules/media-proxies/routes.js';
import { storageTaskRoutes } from './modules/storage-tasks/routes.js';
import { bundleRoutes } from './modules/bundles/routes.js';
import { turnoverRoutes } from './modules/turnovers/routes.js';
import { mediaRoutes } from './modules/media/routes.js';
import { purchaseOrderRoutes } from './modules/purchase-orders/routes.js';
import { visionTokenRoutes } from './modules/vision-tokens/routes.js';
import { lookBriefRoutes } from './modules/look-briefs/routes.js';
import { mcp } from './mcp/routes.js';
import { adminRoutes } from './modules/admin/routes.js';
import { changeRoutes } from './modules/changes/routes.js';
import { ChangeWatch } from './modules/changes/watch.js';
import { onCommit, registerCommitNews } from './db/change-signal.js';
import { webhookRoutes } from './modules/webhooks/routes.js';
import { auditRoutes } from './modules/audit/routes.js';
import { authorizeOrRecord } from './modules/audit/refused-access.js';
import { AuditPruner } from './modules/audit/retention.js';
import { WebhookWorker } from './modules/webhooks/worker.js';
import { realClock, type WaitClock } from './util/wait-clock.js';
import { deliveryBacklogs } from './modules/webhooks/repository.js';
import { adminLookupRoutes } from './modules/admin-lookup/routes.js';
import { callerRoutes } from './modules/caller/routes.js';
import { consoleRoutes } from './modules/console/routes.js';
import { vendorViewRoutes } from './modules/vendor-view/routes.js';
import { organisationRoutes } from './modules/organisations/routes.js';
import { deliveryPackageRoutes } from './modules/delivery-packages/routes.js';
import { deliveryStatusRoutes } from './modules/delivery-status/routes.js';
import { reviewRoutes } from './modules/submission-reviews/routes.js';
import { signInRoutes } from './modules/sign-in/routes.js';
import { signInAdminRoutes } from './modules/sign-in-admin/routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    /** Assembled answers by production revision (AnswerCache). */
    answers: AnswerCache;
  }
}

export interface AppOptions {
  config: Config;
  /** An open, migrated database; when omitted the app opens `config.db` and closes it on close. */
  database?: DbHandle;
  store?: MediaStore;
  /** false silences request logs (tests). */
  logger?: boolean;
  /** Where log lines go instead of stdout (tests read them back). */
  logStream?: { write(line: string): void };
  /**
   * Runs the webhook delivery worker and the audit trail's pruning from ready to close (`serve`
   * does; tests that need them ask).
   */
  webhooks?: boolean;
  /** Opens the scrape listener when the config names a port (`serve` does). */
  metricsListener?: boolean;
  /** Set in a worker process of a cluster: what it shares with its siblings (workerOptions). */
  worker?: WorkerWiring;
  /**
   * What long waits are timed on: held long-polls, a webhook attempt's timeout and retry backoff
   * (the process's own clock by default; tests move one of their own instead of waiting).
   */
  clock?: WaitClock;
  /** When routes' validators and serializers are compiled (CompileSchemas; 'first-use' by default). */
  compileSchemas?: CompileSchemas;
}

/** What a worker shares with its siblings, wired into the app it builds (the cluster's worker). */
export interface WorkerWiring {
  /** Rate-limit windows counted once for the whole server (SQLite; PostgreSQL counts in the database). */
  rateLimitStore: RateStore;
  /** Makes every scrape of this worker answer the whole server's metrics. */
  metrics(metrics: Metrics): void;
}

export type App = FastifyInstance;

/** Capability modules, each a Fastify plugin mounted under /api/v1. */
const apiModules = [
  productionRoutes,
  departmentRoutes,
  sceneRoutes,
  assetRoutes,
  scheduleRoutes,
  deliveryRoutes,
  approvalRoutes,
  scriptChangeRoutes,
  activityRoutes,
  changeRoutes,
  jobRoutes,
  peopleRoutes,
  mediaTicketRoutes,
  assetWriteRoutes,
  approvalDecideRoutes,
  storageEventRoutes,
  mediaProxyRoutes,
  storageTaskRoutes,
  bundleRoutes,
  turnoverRoutes,
  mediaRoutes,
  purchaseOrderRoutes,
  visionTokenRoutes,
  lookBriefRoutes,
  adminRoutes,
  webhookRoutes,
  adminLookupRoutes,
  organisationRoutes,
  deliveryPackageRoutes,
  deliveryStatusRoutes,
  reviewRoutes,
  vendorViewRoutes,
  callerRoutes,
  auditRoutes,
  signInRoutes,
  signInAdminRoutes,
];

/**
 * A plugin of routes, in its own encapsulated context, that fails at start-up unless the whole
 * HTTP layer (and `after`) is registered before it.
 */
function routesAfter<O extends Record<string, unknown>>(
  name: string,
  routes: FastifyPluginAsync<O>,
  after: string[] = [],
): FastifyPluginAsync<O> {
  return fp(async (app: FastifyInstance, opts: O) => routes(app, opts), {
    name,
    encapsulate: true,
    dependencies: [...HTTP_LAYER, ...after],
  });
}

const health = routesAfter('prodgraph-health', healthRoutes);
const consolePage = routesAfter('prodgraph-console', consoleRoutes);
const mediaFiles = routesAfter('prodgraph-media-files', mediaFileRoutes);
// each MCP tool reads its REST route's auth and schemas as that route registers
const api = routesAfter(
  'prodgraph-api',
  async (app) => {
    for (const mod of apiModules) await app.register(mod);
  },
  ['prodgraph-mcp'],
);

/** The Fastify server, with the limits and timeouts every request is held to. */
function createServer(config: Config, options: AppOptions) {
  return Fastify({
    // tickets in URLs and Authorization headers never reach a log line (loggerOptions)
    logger: options.logger === false ? false : loggerOptions(config.logLevel, options.logStream),
    // one line per request instead of Fastify's two (RequestLog)
    logController: new RequestLog(),
    // ids in paths are integers; trailing slashes are the same route
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // request parts are validated as sent (strictValidatorBuilder); validators and serializers
    // are compiled when a route first needs them unless a test asks for all at start (CompileSchemas)
    schemaController: {
      compilersFactory: {
        buildValidator: strictValidatorBuilder(options.compileSchemas ?? 'first-use'),
        buildSerializer: serializerBuilder(options.compileSchemas ?? 'first-use'),
      },
    },
    frameworkErrors: (err, _request, reply) => {
      frameworkError(err, reply);
    },
    clientErrorHandler: clientError,
    bodyLimit: 1024 * 1024,
    // the client's address (rate limits before a key is known, logs) behind a reverse proxy
    trustProxy: config.trustProxy,
    // a slow or stalled client holds one socket for a bounded time, never the server (README)
    ...serverTimeouts(config.timeouts),
    // refused in the catalogue's words instead (shutdownRefusal)
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/** The plugins every request passes through, in the order they see it. */
async function registerPlugins(
  app: App,
  config: Config,
  database: DbHandle,
  metrics: Metrics,
  worker: WorkerWiring | undefined,
): Promise<void> {
  installErrorHandling(app);
  // every JSON body is scanned for its nesting depth before it is parsed (installJsonParser)
  installJsonParser(app);
  // The HTTP layer (HTTP_LAYER), then the routes. Each plugin names the ones it must
  // follow (fastify-plugin's `dependencies`): registered out of order, the app fails to start.
  await app.register(outage, { database });
  await app.register(metricsRoutes, { database, metrics, backlogs: deliveryBacklogs });
  await app.register(shutdownRefusal);
  await app.register(routeTable);
  await app.register(openApi);
  await app.register(multipart, {
    limits: { fileSize: config.limits.uploadBytes, files: config.limits.submissionFiles, fields: 20 },
  });
  await app.register(auth, {
    db: database.db,
    signIn: config.signIn,
    authorize: authorizeOrRecord,
  });
  await app.register(requestRules);
  // upload limits before a byte is read, and what becomes of a body an answer leaves unread
  await app.register(requestBody);
  await app.register(rateLimits, {
    config: config.rateLimit,
    db: database.db,
    dialect: database.dialect,
    store: worker?.rateLimitStore,
  });
  await app.register(securityHeaders, { corsOrigins: config.corsOrigins });
  // JSON answers over 1 kB, compressed when the client asks; before the routes it applies to
  await app.register(compression);
}

/** Every route: health, the console, the file route, MCP, then the REST modules under /api/v1. */
async function registerRoutes(app: App): Promise<void> {
  await app.register(health);
  // the web console: one page and its built assets, under its own content security policy
  await app.register(consolePage);
  // the off-plane file route lives at the base URL, outside /api/v1: a ticket in its URL, never a key
  await app.register(mediaFiles);
  await app.register(mcp);
  await app.register(api, { prefix: API_PREFIX });
}

/** The webhook delivery worker, from ready to close. */
function runWebhooks(app: App, config: Config, database: DbHandle, metrics: Metrics, clock: WaitClock): void {
  const worker = new WebhookWorker(database.db, {
    config: config.webhooks,
    clock,
    userAgent: 'prodgraph-webhooks/1',
    onError: repeatedWarning(() => app.log, 'webhook delivery', 5000),
    onAttempt: (a) =>
      metrics.webhookAttempts.inc({
        webhook: String(a.webhookId),
        outcome: a.delivered ? 'delivered' : 'failed',
      }),
  });
  app.addHook('onReady', async () => worker.start());
  // before the database closes: the worker releases its leases on the way out
  app.addHook('preClose', async () => worker.close());
}

/** The audit trail's retention, applied by the server that runs the background work. */
function pruneAuditTrail(app: App, config: Config, database: DbHandle): void {
  const pruner = new AuditPruner(
    database.db,
    config.auditRetentionDays,
    repeatedWarning(() => app.log, 'audit retention', 5000),
  );
  app.addHook('onReady', async () => pruner.start());
  app.addHook('preClose', async () => pruner.close());
}

/**
 * PostgreSQL: this app's readers hear every commit on the schema as the database announces it,
 * on one connection of its own (CommitListener), from before the app serves until
 * it has closed.
 */
function listenForCommits(app: App, database: DbHandle): void {
  const listener = database.commitListener(
    repeatedWarning(
      () => app.log,
      'lost the connection that hears commits; looking for them by polling',
      5000,
    ),
  );
  if (!listener) return;
  const unregister = registerCommitNews(database.db, listener);
  // once the app is built, so an app that fails to build leaves no connection open
  app.addHook('onReady', async () => listener.start());
  app.addHook('onClose', async () => {
    unregister();
    await listener.close();
  });
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const owned = options.database === undefined;
  const database =
    options.database ?? (await openAndMigrate(config.db, { connectTimeoutMs: config.dbConnectTimeoutMs }));
  const store = options.store ?? new FileMediaStore(config.mediaDir);
  const app = createServer(config, options);
  const clock = options.clock ?? realClock;

  listenForCommits(app, database);
  const changes = new ChangeWatch(
    database.db,
    config.changePollMs,
    repeatedWarning(() => app.log, 'could not look for changes'),
    clock,
  );
  const metrics = new Metrics();
  options.worker?.metrics(metrics);
  const secrets = await SigningSecrets.open(
    database.db,
    config,
    repeatedWarning(() => app.log, 'could not read the signing secrets'),
  );
  app.addHook('onClose', async () => secrets.close());
  app.decorate('ctx', {
    config,
    db: database.db,
    dialect: database.dialect,
    store: measuredStore(store, metrics),
    changes,
    secrets,
    clock,
  });
  const answers = new AnswerCache(config.answerCacheBytes);
  app.decorate('answers', answers);
  // cached answers of a revision a commit has passed are dropped at once, whichever process committed
  const unsubscribe = onCommit((productionId, revision) => {
    if (revision !== undefined) answers.retire(productionId, revision);
  });
  app.addHook('onClose', async () => unsubscribe());
  // before the server stops taking connections: held long-polls answer now instead of holding close up
  app.addHook('preClose', async () => changes.close());
  await registerPlugins(app, config, database, metrics, options.worker);
  await registerRoutes(app);

  if (options.webhooks) runWebhooks(app, config, database, metrics, clock);
  if (options.webhooks) pruneAuditTrail(app, config, database);
  if (options.metricsListener && config.metricsListener) metricsListener(app, config.metricsListener);
  if (owned) app.addHook('onClose', async () => database.close());
  return app;
}
