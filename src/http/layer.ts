/**
 * The plugins whose hooks every route of the service must see, by their `fastify-plugin` names.
 * The route table's `onRoute` check (every route of the service declared with declareRoute) and
 * MCP's record of the REST routes see only routes registered after them, so each plugin that
 * adds routes names these as its dependencies: registered too early, the app fails at start-up
 * instead of serving routes that skip a check.
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
  'prodgraph-rate-limit',
  'prodgraph-security-headers',
  'prodgraph-compression',
];
