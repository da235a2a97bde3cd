import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../config.js';

function json(res: ServerResponse, status: number, detail: string, code: string, headers = {}): void {
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
    .end(JSON.stringify({ detail, code }));
}

function answer(app: FastifyInstance, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/metrics') {
    json(res, 404, `no route for ${req.method} ${path}`, 'route_not_found');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    json(res, 405, 'GET /metrics only', 'method_not_allowed', { allow: 'GET, HEAD' });
    return;
  }
  app.metrics.text().then(
    (text) => {
      res.writeHead(200, { 'content-type': app.metrics.contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
    },
    (err) => {
      app.log.warn({ err }, 'could not collect the metrics');
      json(res, 500, 'internal server error', 'internal');
    },
  );
}

/**
 * The scrape listener (PRODGRAPH_METRICS_PORT): GET /metrics without a key, nothing else, on
 * loopback unless PRODGRAPH_METRICS_HOST says otherwise — how a Prometheus beside the server
 * reaches it, with no key to keep. Opens when the app is ready, closes with it.
 */
export function metricsListener(app: FastifyInstance, listen: { host: string; port: number }): void {
  let server: Server | null = null;
  app.addHook('onReady', async () => {
    const s = createServer((req, res) => answer(app, req, res));
    await new Promise<void>((resolve, reject) => {
      s.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          err.code === 'EADDRINUSE'
            ? new ConfigError(
                `PRODGRAPH_METRICS_PORT: port ${listen.port} on ${listen.host} is already in use; pick another`,
              )
            : err,
        ),
      );
      s.listen({ host: listen.host, port: listen.port }, resolve);
    });
    server = s;
    const { address, port } = s.address() as AddressInfo;
    app.log.info(
      `metrics listening at http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`,
    );
  });
  app.addHook('onClose', async () => {
    const s = server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  });
}
