/* global process, console, fetch, FormData, Blob */
// A smoke run of the built service on whatever Node runs this file (CI: Node 22): the demo
// loaded, a real server started, one request of each kind, a clean shutdown. Node's own
// modules only; run from a checkout where `npm ci` has built dist/.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'prodgraph-smoke-'));
const flags = ['--db', join(dir, 'demo.db'), '--media', join(dir, 'media')];
const cli = (...args) =>
  execFileSync(process.execPath, ['dist/cli.js', ...args, ...flags], { encoding: 'utf8' });
const fail = (what) => {
  console.error(`smoke on Node ${process.version}: ${what}`);
  process.exitCode = 1;
  throw new Error(what);
};
const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

cli('demo');
const key = JSON.parse(
  cli(
    'keys',
    'mint',
    '--production',
    'nightfall',
    '--label',
    'smoke',
    '--scopes',
    'read,write,admin,metrics',
    '--json',
  ),
).token;
const [port, metricsPort] = [await freePort(), await freePort()];
const server = spawn(process.execPath, ['dist/cli.js', 'serve', '--port', String(port), ...flags], {
  env: { ...process.env, PRODGRAPH_METRICS_PORT: String(metricsPort) },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const exited = new Promise((resolve) => server.once('exit', resolve));
await new Promise((resolve, reject) => {
  const onData = (chunk) => chunk.toString().includes('Server listening') && resolve();
  server.stdout.on('data', onData);
  server.stderr.on('data', onData);
  exited.then((code) => reject(new Error(`the server exited (${code}) before listening`)));
});

const base = `http://127.0.0.1:${port}`;
const auth = { authorization: `Bearer ${key}` };
const expect = async (what, status, url, init = {}) => {
  const res = await fetch(url.startsWith('http') ? url : `${base}${url}`, init);
  const body = await res.text();
  if (res.status !== status) fail(`${what}: ${res.status} ${body.slice(0, 300)}`);
  console.error(`ok  ${what} (${res.status})`);
  return body.startsWith('{') || body.startsWith('[') ? JSON.parse(body) : body;
};

try {
  await expect('health', 200, '/healthz');
  await expect('OpenAPI document', 200, '/api/v1/openapi.json');
  await expect('a read', 200, '/api/v1/production', { headers: auth });
  const assets = await expect('a list', 200, '/api/v1/assets?limit=5', { headers: auth });
  const created = await expect('a write', 201, '/api/v1/assets', {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'smoke-1' },
    body: JSON.stringify({ label: `smoke on ${process.version}` }),
  });
  const still = readdirSync('demo/episodic/media').find((f) => f.endsWith('.jpg'));
  const form = new FormData();
  form.append(
    'file',
    new Blob([readFileSync(join('demo/episodic/media', still))], { type: 'image/jpeg' }),
    still,
  );
  const version = await expect('an upload', 201, `/api/v1/assets/${created.node_id}/versions`, {
    method: 'POST',
    headers: auth,
    body: form,
  });
  await expect('a media file', 200, `/api/v1/media/${version.media_id ?? assets[0]?.media_id ?? 1}`, {
    headers: auth,
  });
  await expect('the change feed', 200, '/api/v1/changes?after=now&wait=0', { headers: auth });
  await expect('an admin read', 200, '/api/v1/admin/webhooks', { headers: auth });
  await expect('MCP initialize', 200, '/mcp', {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 'smoke', version: '1' },
      },
    }),
  });
  await expect('metrics (scrape listener)', 200, `http://127.0.0.1:${metricsPort}/metrics`);
  await expect('a refusal', 401, '/api/v1/production');
} finally {
  server.kill('SIGTERM');
  const code = await exited;
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) fail(`the server exited ${code} on SIGTERM`);
}
console.error(`smoke on Node ${process.version}: every request answered as expected`);
