import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

/**
 * The measured server: the product's app, built exactly as `prodgraph serve` builds it, plus
 * one bench-only route, `GET /bench/hello`, that is the control (same Fastify instance, hooks,
 * logger and error handling; no database). Talks to the bench over the IPC channel: "ready"
 * with its port once listening; on "stats", its peak memory; on "stop", it closes and exits
 * (which is when --cpu-prof writes the profile). Database and media come from BENCH_DB and
 * BENCH_MEDIA.
 */
const send = (message: unknown) => process.send?.(message);

const config = loadConfig({ db: process.env.BENCH_DB, media: process.env.BENCH_MEDIA });
const building = performance.now();
const app = await buildApp({ config });
app.get('/bench/hello', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
send({
  type: 'ready',
  port: typeof address === 'object' && address ? address.port : 0,
  buildAndListenMs: Math.round(performance.now() - building),
  sinceProcessStartMs: Math.round(performance.now()),
});

process.on('message', (message: { type: string }) => {
  if (message.type === 'stats') {
    const usage = process.memoryUsage();
    send({
      type: 'stats',
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      rssMb: Math.round(usage.rss / 1048576),
      heapUsedMb: Math.round(usage.heapUsed / 1048576),
    });
  } else if (message.type === 'stop') {
    void app.close().finally(() => process.exit(0));
  }
});
process.on('disconnect', () => void app.close().finally(() => process.exit(0)));
