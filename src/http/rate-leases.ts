import { LRUCache } from 'lru-cache';
import { sql } from 'kysely';
import type { Db } from '../db/index.js';

type Counted = { current: number; ttl: number };
type Done = (err: Error | null, result?: Counted) => void;

/**
 * A process takes at most this share of what is left of a window in one lease, so the
 * allowance held but not yet used by other processes stays small: blocks shrink as the window
 * fills, and a limit under this figure is counted one request at a time (exactly).
 */
export const LEASE_SHARE = 64;

/** A block of one window's counts this process may hand out: `next` up to `end`, then ask again. */
interface Lease {
  start: number;
  next: number;
  end: number;
  /** The row's count when the lease was taken: more than `max` means nothing was left. */
  seen: number;
  /** Requests waiting for the lease being taken (null when none is in flight). */
  waiting: Array<{ retry: () => void; done: Done }> | null;
}

const blockOf = (max: number, seen: number): number => Math.max(1, Math.floor((max - seen) / LEASE_SHARE));

/**
 * The windows of every process on one PostgreSQL database, without a database write per
 * request. A request was one upsert of its key's row, which every request of a busy key waited
 * on (the row is locked until each upsert commits): on two cores the server answered a fifth of
 * SQLite's requests. Now a process takes a block of counts from the row in one upsert (a
 * lease) and hands them out from memory until they are spent, then takes the next block.
 * Requests of a key that arrive while its lease is being taken wait for that one upsert.
 *
 * What it costs: counts a process has taken but not handed out are spent for everyone, so with
 * several processes a key can be refused a little before its limit — by at most what the
 * other processes hold, each at most 1/LEASE_SHARE of what was left when it took its block.
 * Once the row says the window is spent, the process answers 429 from memory until the window
 * ends. One process alone counts exactly.
 */
export function leasingStore(db: Db) {
  let sinceSweep = 0;
  const leases = new LRUCache<string, Lease>({ max: 50_000 });

  const take = (key: string, windowMs: number, max: number, lease: Lease | undefined) => {
    const now = Date.now();
    const want = blockOf(max, lease && lease.start + windowMs > now ? lease.seen : 0);
    const expired = sql<boolean>`rate_limits.window_start + ${windowMs} <= ${now}`;
    return sql<{ count: number; window_start: number }>`
      insert into rate_limits (key, window_start, count) values (${key}, ${now}, ${want})
      on conflict (key) do update set
        count = case when ${expired} then ${want} else rate_limits.count + ${want} end,
        window_start = case when ${expired} then ${now} else rate_limits.window_start end
      returning count, window_start`
      .execute(db)
      .then(({ rows: [row] }): Lease => {
        if (!row) throw new Error('internal: the rate limit upsert returned no row');
        if (++sinceSweep >= 1000) sweep(now, windowMs);
        const count = Number(row.count);
        const before = count - want;
        const granted = Math.min(want, Math.max(0, max - before));
        return {
          start: Number(row.window_start),
          next: before + 1,
          end: before + granted,
          seen: count,
          waiting: null,
        };
      });
  };

  const sweep = (now: number, windowMs: number) => {
    sinceSweep = 0;
    void db
      .deleteFrom('rate_limits')
      .where('window_start', '<', now - 2 * windowMs)
      .execute()
      .catch(() => undefined);
  };

  /** Answers from a lease of the current window; false when it has nothing left to say. */
  const answer = (lease: Lease, done: Done, max: number, ttl: number): boolean => {
    if (lease.next <= lease.end) done(null, { current: lease.next++, ttl });
    else if (lease.seen > max) done(null, { current: lease.seen + 1, ttl });
    else return false;
    return true;
  };

  return class LeasingStore {
    incr(key: string, done: Done, windowMs: number, max: number): void {
      const lease = leases.get(key);
      if (lease?.waiting) {
        lease.waiting.push({ retry: () => this.incr(key, done, windowMs, max), done });
        return;
      }
      const ttl = lease ? lease.start + windowMs - Date.now() : 0;
      if (lease && ttl > 0 && answer(lease, done, max, ttl)) return;
      const pending: Lease = { start: 0, next: 1, end: 0, seen: 0, waiting: [] };
      leases.set(key, pending);
      take(key, windowMs, max, lease).then(
        (taken) => {
          leases.set(key, taken);
          // the request that took the lease is answered from it even if the window ended
          // while the upsert ran (a block always holds at least one count, or none are left)
          answer(taken, done, max, Math.max(1, taken.start + windowMs - Date.now()));
          for (const w of pending.waiting ?? []) w.retry();
        },
        (err: Error) => {
          leases.delete(key);
          // the database did not answer: every request waiting on this lease gets its error
          // now (a 503 in an outage) rather than each trying again in turn
          done(err);
          for (const w of pending.waiting ?? []) w.done(err);
        },
      );
    }
    child() {
      return new LeasingStore();
    }
  };
}
