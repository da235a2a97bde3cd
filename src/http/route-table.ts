import type { FastifyInstance, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { RouteAuth } from '../auth/principal.js';
import { isDeclared } from './define-route.js';
import type { RouteResponseHeaders } from './reference-headers.js';

/** One registered route, as the auth and OpenAPI checks see it. */
export interface RouteEntry {
  method: string;
  url: string;
  auth: RouteAuth | 'public' | undefined;
  /** Left out of the OpenAPI document on purpose (the document itself, the docs UI). */
  hidden: boolean;
  /** The operation's stable name in the document: a method name in every generated client. */
  operationId: string | undefined;
  responseHeaders: RouteResponseHeaders | undefined;
  /** Its JSON answers are compressed on request (the `compression` plugin): not media bytes. */
  compresses: boolean;
  /** It only refuses (it documents no success, as `GET /mcp`, which answers 405): no method a 405 offers. */
  refusesEveryRequest: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Headers this route answers of its own (an ETag, a Location), documented in the reference. */
    responseHeaders?: RouteResponseHeaders;
  }
  interface FastifyInstance {
    /** Every route Fastify registered, one entry per method (HEAD left out). */
    routeTable: readonly RouteEntry[];
  }
}

/** A route of the service: one that declares an auth, or any under /api/v1. */
const ofTheService = (route: RouteOptions) =>
  route.config?.auth !== undefined || route.url.startsWith('/api/v1');

/**
 * Keeps the list of registered routes, so the routes, their declared auth and the OpenAPI
 * document can be checked against each other (Fastify itself only prints its router tree); and
 * stops the app at start-up when a route of the service was registered without declareRoute,
 * which gives it what every route answers.
 */
async function routeTablePlugin(app: FastifyInstance) {
  const table: RouteEntry[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (ofTheService(route) && !isDeclared(route))
      throw new Error(
        `route ${methods.join(',')} ${route.url} was not declared with declareRoute (routesOf)`,
      );
    const schema = (route.schema ?? {}) as { hide?: boolean; operationId?: string; response?: object };
    const statuses = Object.keys(schema.response ?? {});
    for (const method of methods) {
      // Fastify adds a HEAD route to every GET route; the service declares no HEAD route of its own
      if (method === 'HEAD') continue;
      table.push({
        method,
        url: route.url,
        auth: route.config?.auth,
        hidden: schema.hide === true,
        operationId: schema.operationId,
        responseHeaders: route.config?.responseHeaders,
        compresses: route.compress !== false,
        refusesEveryRequest: statuses.length > 0 && statuses.every((s) => Number(s) >= 400),
      });
    }
  });
}

export const routeTable = fp(routeTablePlugin, {
  name: 'prodgraph-route-table',
  // the operator's /metrics stays out of the table, hence out of the API's checks and reference
  dependencies: ['prodgraph-metrics'],
});
