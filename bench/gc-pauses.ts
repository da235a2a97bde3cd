import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';

/**
 * The garbage collector's pauses on the main thread, as V8 reports them: how many, their total
 * and the longest, by kind (scavenge: the young generation; mark-compact: the whole heap). A
 * latency spike with no long pause beside it did not come from the collector. `take()` returns
 * what happened since the last `take()` and starts over. Collections forced by the bench itself
 * are left out.
 */
export interface GcPauses {
  count: number;
  totalMs: number;
  maxMs: number;
  /** The longest pause of each kind seen (scavenge, mark-compact, incremental, weak callbacks). */
  maxByKindMs: Record<string, number>;
}

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

export function watchGcPauses(): { take: () => GcPauses } {
  let current = empty();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) record(current, entry);
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    take() {
      const done = current;
      current = empty();
      done.totalMs = round(done.totalMs);
      return done;
    },
  };
}

function empty(): GcPauses {
  return { count: 0, totalMs: 0, maxMs: 0, maxByKindMs: {} };
}

function record(into: GcPauses, entry: PerformanceEntry): void {
  const detail = ((entry as { detail?: unknown }).detail ?? {}) as { kind?: number; flags?: number };
  // a collection the bench asked for (global.gc() before a memory sample) is not the load's
  if ((detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) return;
  const kind = KINDS[detail.kind ?? -1] ?? 'other';
  const ms = entry.duration;
  into.count++;
  into.totalMs += ms;
  into.maxMs = Math.max(into.maxMs, round(ms));
  into.maxByKindMs[kind] = Math.max(into.maxByKindMs[kind] ?? 0, round(ms));
}

const round = (ms: number) => Math.round(ms * 100) / 100;
