import type { PrimaryLink } from './link.js';
import type { RateAnswer } from './messages.js';

type Counted = { current: number; ttl: number };
type Done = (err: Error | null, result?: Counted) => void;

/**
 * The rate-limit windows of a whole server, kept by its primary process: every worker counts
 * each request here, once, so a key's limit is the same however many workers share its load.
 * A window starts with a key's first request and lasts `windowMs`; windows long over are swept.
 */
export class RateWindows {
  private readonly windows = new Map<string, { count: number; start: number }>();
  private sinceSweep = 0;

  count(key: string, windowMs: number, increment: boolean, now = Date.now()): Counted {
    let w = this.windows.get(key);
    if (!w || w.start + windowMs <= now) {
      w = { count: 0, start: now };
      if (increment) this.windows.set(key, w);
    }
    if (increment) w.count++;
    if (++this.sinceSweep >= 10_000) this.sweep(windowMs, now);
    return { current: w.count, ttl: w.start + windowMs - now };
  }

  private sweep(windowMs: number, now: number): void {
    this.sinceSweep = 0;
    for (const [key, w] of this.windows) if (w.start + windowMs <= now) this.windows.delete(key);
  }
}

/**
 * A @fastify/rate-limit store for a cluster worker: each request is counted by the primary's
 * RateWindows (one IPC round trip). A route's own limit (its `child`) counts in the same table
 * under its own key names, as the PostgreSQL store does.
 */
export function clusterRateStore(link: PrimaryLink) {
  const ask = (key: string, done: Done, windowMs: number, increment: boolean) => {
    link.ask<RateAnswer>({ prodgraph: 'rate', key, windowMs, increment }).then(
      (a) => done(null, { current: a.current, ttl: a.ttl }),
      (err: Error) => done(err),
    );
  };
  return class ClusterStore {
    incr(key: string, done: Done, windowMs: number): void {
      ask(key, done, windowMs, true);
    }
    read(key: string, done: Done, windowMs: number): void {
      ask(key, done, windowMs, false);
    }
    child() {
      return new ClusterStore();
    }
  };
}
