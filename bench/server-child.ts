import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { watchGcPauses } from './gc-pauses.js';

/**
 * The measured server: the product's app, built exactly as `prodgraph serve` builds it, plus
 * one bench-only route, `GET /bench/hello`, that is the control (same Fastify instance, hooks,
 * logger and error handling; no database). Talks to the bench over the IPC channel: "ready"
 * with its port once listening; on "stats", its memory and the collector's pauses since the
 * last "stats"; on "stop", it closes and exits (which is when --cpu-prof writes the profile);
 * on "sample" (the soak), its memory after a full GC, the event loop's delay and the
 * collector's pauses since the last sample. Database and media come from BENCH_DB and
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

// how late the event loop ran its timers (a GC pause or a blocking call shows here), in ns
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const gc = (globalThis as { gc?: () => void }).gc;
const gcPauses = watchGcPauses();

/**
 * Memory after a full GC (needs --expose-gc) and the loop delay since the last sample. The
 * histogram is read before the GC and reset once the GC's own pause has been recorded, so the
 * forced collection is not charged to the load.
 */
function sample() {
  const delay = {
    p50Ms: loopDelay.percentile(50) / 1e6,
    p99Ms: loopDelay.percentile(99) / 1e6,
    maxMs: loopDelay.max / 1e6,
  };
  loopDelay.reset();
  gc?.();
  const usage = process.memoryUsage();
  setTimeout(() => loopDelay.reset(), 50);
  return {
    type: 'sample',
    rssMb: usage.rss / 1048576,
    heapUsedMb: usage.heapUsed / 1048576,
    // Buffers and other memory outside the JS heap (the kept answers live here)
    externalMb: usage.external / 1048576,
    afterGc: gc !== undefined,
    loopDelay: delay,
    gcPauses: gcPauses.take(),
  };
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'sample') {
    send(sample());
  } else if (message.type === 'stats') {
    const usage = process.memoryUsage();
    send({
      type: 'stats',
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      rssMb: Math.round(usage.rss / 1048576),
      heapUsedMb: Math.round(usage.heapUsed / 1048576),
      gcPauses: gcPauses.take(),
    });
  } else if (message.type === 'stop') {
    void app.close().finally(() => process.exit(0));
  }
});
process.on('disconnect', () => void app.close().finally(() => process.exit(0)));
