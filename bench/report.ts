import { workersLines, type WorkersResult } from './workers.js';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';
import type { GcPauses } from './gc-pauses.js';
import type { SoakResult } from './soak.js';

export interface RouteResult {
  name: string;
  label: string;
  kind: 'control' | 'read' | 'write';
  connections: number;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** req/s over the in-app control's req/s in the same run (the mean of its first and last measurement). */
  ratio: number;
  /** req/s over the bare Fastify hello-world's in the same run (the mean of its first and last). */
  ratioToBare: number;
  itemsPerSec?: { value: number; unit: string };
  /** A write: items answered as not new (replays, duplicates); any marks the row as failed. */
  repeated?: number;
  /** Responses by status code; a row whose responses are not all the expected status failed. */
  statuses: Record<string, number>;
  expected: number;
  errors: number;
  timeouts: number;
  /** The load generator that measured it: wrk (reads, when installed) or autocannon. */
  loader: 'wrk' | 'autocannon';
  /** The server's RSS right after this route's load, and its peak since it started. */
  serverMemory?: { rssMb: number; peakRssMb: number };
  /** The collector's pauses on the server's main thread during this route's load (warm-up included). */
  gcPauses?: GcPauses;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  database: string;
  loadAverageBefore: number[];
  loadAverageAfter: number[];
  pinned: string;
  commit: string;
}

export interface BenchReport {
  date: string;
  dialect: 'sqlite' | 'postgres';
  options: Record<string, unknown>;
  machine: Machine;
  dataset: {
    scale: number;
    seed: number;
    documentMb: number;
    importSeconds: number;
    importPeakRssMb: number;
    importWhen: string;
  };
  server: {
    startToReadyMs: number | null;
    startToReadyNote: string;
    benchServerReadyMs: number;
    peakRssMb: number;
  };
  control: { first: number; last: number };
  bare: { first: number; last: number };
  routes: RouteResult[];
  soak?: SoakResult & { ratioToBare: number };
  workers?: WorkersResult;
}

/**
 * The files changed since the commit, named so a reader can tell what was measured; the bench's
 * own earlier results (bench/results/) change no code and are left out. Empty when nothing else is.
 */
export function uncommittedCode(porcelain: string, shown = 5): string {
  const paths = porcelain
    .split('\n')
    .map((line) => line.slice(3).trim())
    .filter((path) => path !== '' && !path.startsWith('bench/results/'));
  if (paths.length <= shown) return paths.join(', ');
  return `${paths.slice(0, shown).join(', ')} and ${paths.length - shown} more`;
}

export function describeMachine(database: string, pinned: string, loadBefore: number[]): Machine {
  // a copy that is not a git checkout (an exported tree measured for comparison) says which it is
  let commit = process.env.BENCH_COMMIT ?? 'unknown';
  if (!process.env.BENCH_COMMIT)
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
      const changed = uncommittedCode(execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' }));
      if (changed) commit += ` (with uncommitted changes to ${changed})`;
    } catch {
      // not a git checkout: the commit stays unknown
    }
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${release()}`,
    node: process.version,
    database,
    loadAverageBefore: loadBefore.map((l) => Math.round(l * 100) / 100),
    loadAverageAfter: loadavg().map((l) => Math.round(l * 100) / 100),
    pinned,
    commit,
  };
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function statusNote(r: RouteResult): string {
  const total = Object.values(r.statuses).reduce((s, n) => s + n, 0);
  const good = r.statuses[String(r.expected)] ?? 0;
  const problems = [];
  if (good !== total) {
    problems.push(
      Object.entries(r.statuses)
        .filter(([code]) => code !== String(r.expected))
        .map(([code, n]) => `${n}× ${code}`)
        .join(', '),
    );
  }
  if (r.errors) problems.push(`${r.errors} errors`);
  if (r.timeouts) problems.push(`${r.timeouts} timeouts`);
  if (r.repeated) problems.push(`${fmt(r.repeated)} answered as replays or duplicates, not new writes`);
  return problems.length ? ` **FAILED: ${problems.join('; ')}**` : '';
}

function soakLines(soak: NonNullable<BenchReport['soak']>): string[] {
  const statuses = Object.entries(soak.statuses)
    .map(([code, n]) => `${fmt(n)}× ${code}`)
    .join(', ');
  const failed =
    Object.keys(soak.statuses).some((c) => c !== '200' && c !== '201') || soak.errors || soak.timeouts;
  return [
    '',
    `### Mixed soak: ${fmt(soak.seconds)} s, ${soak.connections} connections`,
    '',
    `Each connection in turn: a note with an Idempotency-Key, a vendor's scene bundle, its \`/turnovers\`, the next page of \`/assets?limit=100\`, the change feed from its last cursor, \`/production\`. ${fmt(soak.reqPerSec)} req/s (ratio to bare Fastify ${fmt(soak.ratioToBare, 3)}), p50 ${fmt(soak.p50Ms, 1)} ms, p99 ${fmt(soak.p99Ms, 1)} ms; ${statuses}${soak.errors ? `; ${soak.errors} errors` : ''}${soak.timeouts ? `; ${soak.timeouts} timeouts` : ''}${failed ? ' **FAILED**' : ''}.`,
    '',
    '| at s | RSS MB | heap after full GC MB | external (buffers) MB | event-loop delay p99 ms | max ms | longest GC pause ms | GC total ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...soak.samples.map(
      (x) =>
        `| ${x.atSeconds} | ${fmt(x.rssMb)} | ${fmt(x.heapAfterGcMb, 1)} | ${fmt(x.externalMb, 1)} | ${fmt(x.loopDelayP99Ms, 1)} | ${fmt(x.loopDelayMaxMs, 1)} | ${fmt(x.gcMaxMs ?? 0, 1)} | ${fmt(x.gcTotalMs ?? 0)} |`,
    ),
  ];
}

/**
 * Where the server's memory went (its RSS after each route and its peak so far) and what the
 * collector cost it: a route's p99 far above its longest pause did not come from the collector.
 * "conns ÷ req/s" is the mean time a request spends in the server when every connection always
 * has one outstanding (Little's law): the queue a closed-loop load builds on one event loop. A
 * p99 about twice that is queueing, not a stall.
 */
function memoryLines(routes: RouteResult[]): string[] {
  const measured = routes.filter((r) => r.serverMemory);
  if (measured.length === 0) return [];
  const gc = (g: GcPauses | undefined) =>
    g
      ? `${fmt(g.count)} | ${fmt(g.totalMs)} | ${fmt(g.maxByKindMs['scavenge'] ?? 0, 1)} | ${fmt(g.maxByKindMs['mark-compact'] ?? 0, 1)}`
      : '– | – | – | –';
  return [
    '',
    '### Server memory and collector pauses after each route (in the order measured)',
    '',
    '| route | RSS after MB | peak so far MB | conns ÷ req/s ms | p99 ms | GC pauses | total ms | longest scavenge ms | longest mark-compact ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...measured.map(
      (r) =>
        `| ${r.label} | ${fmt(r.serverMemory!.rssMb)} | ${fmt(r.serverMemory!.peakRssMb)} | ${fmt((r.connections / r.reqPerSec) * 1000, 1)} | ${fmt(r.p99Ms, 1)} | ${gc(r.gcPauses)} |`,
    ),
  ];
}

export function markdown(report: BenchReport): string {
  const m = report.machine;
  const d = report.dataset;
  const lines = [
    `## prodgraph bench — ${report.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, scale ${d.scale}`,
    '',
    `${report.date} · commit ${m.commit} · ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB · ${m.os} · Node ${m.node} · ${m.database}`,
    `load average before ${m.loadAverageBefore.join(' / ')}, after ${m.loadAverageAfter.join(' / ')} · ${m.pinned}`,
    `options: ${Object.entries(report.options)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(' ')}`,
    '',
    '| route | load | conns | req/s | p50 ms | p99 ms | ratio to bare Fastify | ratio to in-app control | |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|',
    ...report.routes.map(
      (r) =>
        `| ${r.label} | ${r.loader} | ${r.connections} | ${fmt(r.reqPerSec)} | ${fmt(r.p50Ms, 1)} | ${fmt(r.p99Ms, 1)} | ${r.name === 'bare' ? '1 (reference)' : fmt(r.ratioToBare, 3)} | ${r.name === 'control' ? '1' : fmt(r.ratio, 3)} | ${r.itemsPerSec ? `${fmt(r.itemsPerSec.value)} ${r.itemsPerSec.unit}` : ''}${statusNote(r)} |`,
    ),
    '',
    `Bare Fastify: ${fmt(report.bare.first)} req/s first, ${fmt(report.bare.last)} req/s last; in-app control (\`GET /bench/hello\` in the product's app): ${fmt(report.control.first)} first, ${fmt(report.control.last)} last. Each ratio uses the mean of its control's two measurements.`,
    ...memoryLines(report.routes),
    ...(report.soak ? soakLines(report.soak) : []),
    ...(report.workers ? workersLines(report.workers) : []),
    '',
    '| | |',
    '|---|---|',
    `| document | ${d.documentMb} MB JSON (scale ${d.scale}, seed ${d.seed}) |`,
    `| import (\`prodgraph import\`, ${d.importWhen}) | ${fmt(d.importSeconds, 1)} s, peak RSS ${fmt(d.importPeakRssMb)} MB |`,
    `| start to ready | ${report.server.startToReadyMs === null ? 'not measured' : `${fmt(report.server.startToReadyMs)} ms`} (${report.server.startToReadyNote}) |`,
    `| bench server ready (process start → listening, incl. tsx) | ${fmt(report.server.benchServerReadyMs)} ms |`,
    `| server peak RSS (whole run) | ${fmt(report.server.peakRssMb)} MB |`,
    '',
  ];
  return lines.join('\n');
}
