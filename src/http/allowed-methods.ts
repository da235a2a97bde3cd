import type { RouteEntry } from './route-table.js';

/*
 * What a 405 names in `Allow`: the methods the requested path takes. Fastify's router answers a
 * known path with an unknown method as it answers an unknown path (the not-found handler), so the
 * handler asks this whether the path exists under another method: `PUT /api/v1/production` is
 * 405 `method_not_allowed` with `Allow: GET, HEAD`; `PUT /api/v1/nothing` stays 404
 * `route_not_found`.
 */

/** `/api/v1/assets/:node_id/notes` as a pattern over request paths; `*` takes the rest of the path. */
function patternOf(url: string): RegExp {
  const parts = url.split('/').map((segment) => {
    if (segment === '*') return '.*';
    if (segment.startsWith(':')) return '[^/]+';
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  // trailing slashes are the same route (the router's ignoreTrailingSlash)
  return new RegExp(`^${parts.join('/').replace(/\/$/, '')}/?$`);
}

/**
 * A lookup from a request path to the methods registered for it (HEAD beside every GET, as
 * Fastify serves it), in a fixed order. Left out: OPTIONS (a CORS pre-flight route may take every
 * path, which would make every unknown path "exist"), and a route that only refuses (`GET /mcp`
 * answers 405 itself: the method is not one the path takes).
 */
export function allowedMethods(table: readonly RouteEntry[]): (path: string) => string[] {
  const routes = table
    .filter((r) => r.method !== 'OPTIONS' && !r.refusesEveryRequest)
    .map((r) => ({ method: r.method, pattern: patternOf(r.url) }));
  return (path) => {
    const methods = new Set<string>();
    for (const r of routes) {
      if (!r.pattern.test(path)) continue;
      methods.add(r.method);
      if (r.method === 'GET') methods.add('HEAD');
    }
    return ORDER.filter((m) => methods.has(m)).concat([...methods].filter((m) => !ORDER.includes(m)));
  };
}

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
