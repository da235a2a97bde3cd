import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon, { type Request } from 'autocannon';
import type { GcPauses } from './gc-pauses.js';
import type { Prepared } from './routes.js';

/**
 * The mixed soak: 20 connections, each walking the same six requests in turn for minutes on
 * end, the way a season's automation mixes them: a note written with an Idempotency-Key, a
 * vendor's scene bundle and its turnovers, the next page of the asset list (following `Link`),
 * the change feed read on from its last cursor, and `GET /production`. Every note bumps the
 * production's revision, so kept answers keep being retired and rebuilt: this is what finds a
 * process that grows. Every 30 s the server reports its RSS and heap after a full GC, the
 * event loop's delay (p99, max) and the collector's pauses (longest, total) over the interval.
 */

export const SOAK_CONNECTIONS = 20;
export const SOAK_SAMPLE_SECONDS = 30;

export interface SoakSample {
  atSeconds: number;
  rssMb: number;
  heapAfterGcMb: number;
  externalMb: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** The collector's longest pause in the interval, and all its pauses together. */
  gcMaxMs: number;
  gcTotalMs: number;
}

export interface SoakResult {
  seconds: number;
  connections: number;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  samples: SoakSample[];
}

interface ServerSample {
  rssMb: number;
  heapUsedMb: number;
  externalMb: number;
  afterGc: boolean;
  loopDelay: { p50Ms: number; p99Ms: number; maxMs: number };
  gcPauses: GcPauses;
}

const API = '/api/v1';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

interface Walk {
  n: number;
  feed: string;
  page: string | null;
}

/** The six requests, with per-connection state (the feed cursor, the next page) in autocannon's context. */
function soakRequests(p: Prepared): Request[] {
  const f = p.fixture;
  let n = 0;
  // autocannon's per-connection context: where this connection's walks have got to
  const walk = (context: object): Walk => {
    const c = context as { walk?: Walk };
    return (c.walk ??= { n: 0, feed: 'now', page: null });
  };
  return [
    {
      method: 'POST',
      headers: { ...auth(f.wideKey), 'content-type': 'application/json' },
      setupRequest: (req: Request) => {
        const i = n++;
        return {
          ...req,
          path: `${API}/assets/${f.assets[i % f.assets.length]!}/notes`,
          headers: { ...req.headers, 'idempotency-key': `soak-${p.runId}-${i}` },
          body: JSON.stringify({ text: `soak note ${i}` }),
        };
      },
    },
    {
      method: 'GET',
      setupRequest: (req: Request, context: object) => {
        const id = f.vendorScenes[walk(context).n++ % f.vendorScenes.length]!;
        return { ...req, path: `${API}/bundles/scene/${id}`, headers: auth(f.vendorKey) };
      },
    },
    { method: 'GET', path: `${API}/turnovers`, headers: auth(f.vendorKey) },
    {
      method: 'GET',
      headers: auth(f.wideKey),
      setupRequest: (req: Request, context: object) => ({
        ...req,
        path: walk(context).page ?? `${API}/assets?limit=100`,
      }),
      onResponse: (_status: number, _body: string, context: object, headers?: IncomingHttpHeaders) => {
        // the next page, or the first again once the walk reached the end
        const next = /<([^>]+)>;\s*rel="next"/.exec(String(headers?.link ?? ''));
        const url = next ? new URL(next[1]!, 'http://bench') : null;
        walk(context).page = url ? url.pathname + url.search : null;
      },
    },
    {
      method: 'GET',
      headers: auth(f.wideKey),
      setupRequest: (req: Request, context: object) => ({
        ...req,
        path: `${API}/changes?limit=100&after=${encodeURIComponent(walk(context).feed)}`,
      }),
      onResponse: (status: number, body: string, context: object) => {
        if (status === 200) walk(context).feed = (JSON.parse(body) as { next_cursor: string }).next_cursor;
      },
    },
    { method: 'GET', path: `${API}/production`, headers: auth(f.wideKey) },
  ];
}

/** Runs the soak for `seconds`, asking the server for a sample at the start and every 30 s. */
export async function runSoak(
  base: string,
  prepared: Prepared,
  seconds: number,
  sampleServer: () => Promise<ServerSample>,
  log: (line: string) => void,
): Promise<SoakResult> {
  const samples: SoakSample[] = [];
  const started = performance.now();
  const take = async () => {
    const s = await sampleServer();
    const sample = {
      atSeconds: Math.round((performance.now() - started) / 1000),
      rssMb: Math.round(s.rssMb),
      heapAfterGcMb: Math.round(s.heapUsedMb * 10) / 10,
      externalMb: Math.round(s.externalMb * 10) / 10,
      loopDelayP99Ms: Math.round(s.loopDelay.p99Ms * 10) / 10,
      loopDelayMaxMs: Math.round(s.loopDelay.maxMs * 10) / 10,
      gcMaxMs: s.gcPauses.maxMs,
      gcTotalMs: s.gcPauses.totalMs,
    };
    samples.push(sample);
    log(
      `soak ${sample.atSeconds} s: RSS ${sample.rssMb} MB, heap after GC ${sample.heapAfterGcMb} MB, loop delay p99 ${sample.loopDelayP99Ms} ms, longest GC pause ${sample.gcMaxMs} ms`,
    );
  };
  await take();
  const done = new AbortController();
  const sampler = (async () => {
    for (let next = SOAK_SAMPLE_SECONDS; next < seconds; next += SOAK_SAMPLE_SECONDS) {
      const wait = started + next * 1000 - performance.now();
      if (wait > 0) await sleep(wait, undefined, { signal: done.signal }).catch(() => undefined);
      if (done.signal.aborted) return;
      await take();
    }
  })();
  const r = await autocannon({
    url: base,
    connections: SOAK_CONNECTIONS,
    duration: seconds,
    timeout: 30,
    requests: soakRequests(prepared),
  });
  done.abort();
  await sampler;
  await take();
  return {
    seconds,
    connections: SOAK_CONNECTIONS,
    requests: r.requests.total,
    reqPerSec: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    statuses: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([c, s]) => [c, s.count ?? 0])),
    errors: r.errors,
    timeouts: r.timeouts,
    samples,
  };
}
