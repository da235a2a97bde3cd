/**
 * The plugins whose hooks every route of the service must see, by their `fastify-plugin` names.
 * Fastify applies an `onRoute` hook (auth declared, outage and rate-limit answers documented,
 * query strings closed, the route table) only to routes registered after it, so each plugin
 * that adds routes names these as its dependencies: registered too early, the app fails at
 * start-up instead of serving routes that skip a check.
 */
export const HTTP_LAYER = [
  'prodgraph-outage',
  'prodgraph-shutdown',
  'prodgraph-route-table',
  'prodgraph-openapi',
  '@fastify/multipart',
  'prodgraph-auth',
  'prodgraph-request-rules',
  'prodgraph-request-body',
  'prodgraph-idempotency',
  'prodgraph-rate-limit',
  'prodgraph-security-headers',
  'prodgraph-compression',
];
