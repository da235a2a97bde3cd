import type { RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import type { RouteAuth } from '../auth/principal.js';
import { API_PREFIX } from '../http/openapi.js';

/**
 * What an MCP tool, resource or prompt takes from its REST route: that route's own auth
 * declaration and schemas, read off the registered route. Nothing is restated, so the two
 * surfaces cannot drift apart.
 */
export interface RestRoute {
  /** `GET /bundles/scene/:node_id`, relative to /api/v1. */
  key: string;
  auth: RouteAuth;
  params?: TSchema;
  querystring?: TSchema;
  /** The 200 response schema. */
  response: TSchema;
}

export class RestRoutes {
  private readonly routes = new Map<string, RestRoute>();

  /** Called from an onRoute hook for every route the app registers. */
  record(route: RouteOptions): void {
    if (!route.url.startsWith(`${API_PREFIX}/`)) return;
    const auth = route.config?.auth;
    if (!auth || auth === 'public') return;
    const schema = (route.schema ?? {}) as {
      params?: TSchema;
      querystring?: TSchema;
      response?: Record<string, TSchema>;
    };
    const response = schema.response?.[200];
    if (!response) return;
    for (const method of [route.method].flat()) {
      const key = `${method} ${route.url.slice(API_PREFIX.length)}`;
      this.routes.set(key, {
        key,
        auth,
        response,
        ...(schema.params ? { params: schema.params } : {}),
        ...(schema.querystring ? { querystring: schema.querystring } : {}),
      });
    }
  }

  /** The REST route of `key`; a missing one is a programming error caught at start-up. */
  get(key: string): RestRoute {
    const rest = this.routes.get(key);
    if (!rest) throw new Error(`MCP: no REST route "${key}" to take auth and schemas from`);
    return rest;
  }
}
