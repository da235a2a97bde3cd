// No service or repository: this module serves the console's built files and reads no database.
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loadConsole, type ConsoleBuild } from './files.js';
import { routesOf } from '../../http/define-route.js';

/**
 * The page runs only its own script and style, talks only to this server, and cannot be framed
 * (no clickjacking of the grant and key buttons). Images are blob: URLs the script makes from
 * bytes it fetched with the key; nothing else may load.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>prodgraph console</title></head>
<body><h1>The console is not built</h1><p>This server has no console files (dist/console). Run <code>npm run build</code> in the prodgraph checkout (or <code>npm ci</code>, which builds it), then restart the server. The API works meanwhile; its reference is at <a href="/docs">/docs</a>.</p></body></html>`;

const gzipAccepted = (request: FastifyRequest) =>
  /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));

function sendPage(request: FastifyRequest, reply: FastifyReply, build: ConsoleBuild | null) {
  reply.headers(PAGE_HEADERS).header('cache-control', 'no-cache').type('text/html; charset=utf-8');
  if (!build) return reply.code(503).send(NOT_BUILT);
  reply.header('vary', 'Accept-Encoding');
  if (gzipAccepted(request)) return reply.header('content-encoding', 'gzip').send(build.htmlGzip);
  return reply.send(build.html);
}

/**
 * GET /console: the web console, one page; its script and stylesheet under /console/assets/,
 * named by their content and cached for good, sent gzipped to browsers that take it.
 */
export async function consoleRoutes(app: FastifyInstance, opts: { dir?: string } = {}): Promise<void> {
  const build = await loadConsole(opts.dir);
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(PAGE_HEADERS);
  });
  routesOf(app).get(
    '/console',
    { schema: { hide: true }, config: { auth: 'public' } },
    async (request, reply) => sendPage(request, reply, build),
  );
  if (!build) return;
  await app.register(fastifyStatic, {
    root: build.dir,
    prefix: '/console/assets/',
    // a route per built file, made at start: nothing else under the folder is reachable
    wildcard: false,
    globIgnore: ['**/*.gz', 'index.html', 'manifest.json'],
    index: false,
    preCompressed: true,
    immutable: true,
    maxAge: '365d',
    decorateReply: false,
    serveDotFiles: false,
  });
}
