import { randomUUID } from 'node:crypto';
import { Clamp, engagementHears } from '../../auth/clamp.js';
import type { WebhookConfig } from '../../config.js';
import { onCommit } from '../../db/change-signal.js';
import type { Db } from '../../db/index.js';
import { nowIso, parseJson } from '../../db/values.js';
import { encodeCursor } from '../changes/cursor.js';
import { changesAfter } from '../changes/repository.js';
import { toChange } from '../changes/service.js';
import { ChangeWatch } from '../changes/watch.js';
import { Egress, RefusedAddress } from './egress.js';
import * as repo from './repository.js';
import type { WebhookEvent } from './schemas.js';
import { realClock, sleepOn, type WaitClock } from '../../util/wait-clock.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';

/**
 * How long a lease runs past its last renewal, on the database's clock: a holder that dies is
 * taken over this long after its last heartbeat at most (plus one scan).
 */
const LEASE_MS = 3000;
/**
 * How often a worker renews every lease it holds (one statement for all of them), whatever its
 * loops are doing (an attempt may wait for a receiver longer than a lease runs). Three beats a
 * lease: a holder must miss two in a row (an event loop blocked for two seconds) to lose one.
 */
const HEARTBEAT_MS = 1000;
/** How often the worker looks for subscriptions to take on (and run-out leases to take over). */
const SCAN_MS = 1000;
/** How long an idle or backing-off loop waits before it looks at its subscription again. */
const IDLE_MS = 5000;
/** Changes read per look at the log. */
const BATCH = 100;
/** Attempts kept in each subscription's delivery log, trimmed after every PRUNE_EVERY attempts. */
const LOG_KEEP = 1000;
const PRUNE_EVERY = 100;
/** Delivered attempts are recorded at least every this many, or this often. */
const FLUSH_EVERY = 50;
const FLUSH_MS = 100;

type Subscription = NonNullable<Awaited<ReturnType<typeof repo.webhookForDelivery>>>;
type ChangeRow = Awaited<ReturnType<typeof changesAfter>>[number];

/**
 * One thing a subscription is to be told, in order: a change of the log, or (for an engagement
 * webhook) a grant of its engagement that lapsed. Delivering it, or leaving it out, moves the
 * subscription's position past it.
 */
interface Outgoing {
  /** The feed position once past it (a change's id; an expiry leaves the cursor where it is). */
  cursor: number;
  /** The expiry position once past it (expiries only). */
  expiry: repo.ExpiryPosition | null;
  /** Left out (the kinds filter, or beyond the engagement's reach): only the position moves. */
  skip: boolean;
  event: WebhookEvent;
  /** `Prodgraph-Delivery`: the same for every attempt at it. */
  deliveryId: string;
}

/** How often an engagement webhook's delivery loop looks for a lapsed grant at most, while idle: soon after it lapses. */
const EXPIRY_SLACK_MS = 50;

export interface WorkerOptions {
  config: WebhookConfig;
  userAgent: string;
  onError?: (err: unknown) => void;
  /** Told of every delivery attempt as it is made (the metrics count them). */
  onAttempt?: (attempt: repo.Attempt) => void;
  /** What an attempt's timeout, the backoff and an idle loop's wait run on (realClock by default). */
  clock?: WaitClock;
}

/**
 * Delivers every active subscription's changes, each subscription in a loop of its own: one
 * change at a time in feed order (so a receiver sees them in commit order), the cursor moved
 * only after a 2xx (at least once), a failure retried with exponential backoff while the
 * other subscriptions carry on. The API never waits on it: it reads the committed change log.
 * A subscription is delivered by one process at a time (a lease on its row, kept on the
 * database's clock and renewed by a heartbeat), so several servers on one PostgreSQL database
 * share the work without doubling it, however their hosts' clocks disagree; after a crash the
 * lease runs out within seconds and another process resumes from the stored cursor, delivering
 * again what was not recorded as delivered under the same `Prodgraph-Delivery` id.
 */
export class WebhookWorker {
  private readonly owner = randomUUID();
  private readonly running = new Map<number, Promise<void>>();
  /**
   * One controller per delivery loop, aborted one by one on close: a single signal shared by
   * every loop would gather a listener per subscription (Node warns past ten).
   */
  private readonly loops = new Map<number, AbortController>();
  private stopped = false;
  private readonly egress: Egress;
  private readonly watch: ChangeWatch;
  private scanTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private scanning = false;
  private attempts = 0;
  private readonly clock: WaitClock;

  constructor(
    private readonly db: Db,
    private readonly options: WorkerOptions,
  ) {
    // its own watch: a slower poll than the feed's, as a webhook may lag other processes' commits by a second
    this.clock = options.clock ?? realClock;
    this.watch = new ChangeWatch(db, SCAN_MS, options.onError, this.clock);
    this.egress = new Egress(options.config.allow);
  }

  start(): void {
    if (this.scanTimer) return;
    this.scanTimer = setInterval(() => void this.scan(), SCAN_MS);
    this.scanTimer.unref();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), HEARTBEAT_MS);
    this.heartbeatTimer.unref();
    // a commit may be the first for a new subscription's production: look at once
    this.unsubscribe = onCommit(() => void this.scan());
    void this.scan();
  }

  /** Stops taking work, ends every loop (an attempt in flight is abandoned, not logged: it will be retried) and releases the leases. */
  async close(): Promise<void> {
    if (this.scanTimer) clearInterval(this.scanTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.unsubscribe?.();
    this.stopped = true;
    for (const loop of this.loops.values()) loop.abort();
    this.watch.close();
    await Promise.allSettled([...this.running.values()]);
    this.egress.close();
  }

  private async scan(): Promise<void> {
    if (this.scanning || this.stopped) return;
    this.scanning = true;
    try {
      for (const { id } of await repo.deliverableIds(this.db, this.owner)) {
        if (this.running.has(id) || this.stopped) continue;
        const loop = this.deliverLoop(id)
          .catch((err) => this.options.onError?.(err))
          .finally(() => this.running.delete(id));
        this.running.set(id, loop);
      }
    } catch (err) {
      this.options.onError?.(err);
    } finally {
      this.scanning = false;
    }
  }

  /**
   * Renews every lease this worker holds; a loop whose subscription was not renewed (taken over
   * after this process stalled past its lease, or removed) stops at once.
   */
  private async heartbeat(): Promise<void> {
    if (this.stopped || this.loops.size === 0) return;
    // only the loops that held a lease before the renewal ran are judged by it
    const judged = [...this.loops];
    try {
      const held = await repo.renewLeases(this.db, this.owner, LEASE_MS);
      for (const [id, loop] of judged) if (!held.has(id)) loop.abort();
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private async deliverLoop(id: number): Promise<void> {
    if (this.stopped || !(await repo.takeLease(this.db, id, this.owner, LEASE_MS))) return;
    const loop = new AbortController();
    this.loops.set(id, loop);
    if (this.stopped) loop.abort();
    try {
      await this.deliverLeased(id, loop.signal);
    } finally {
      this.loops.delete(id);
    }
  }

  private async deliverLeased(id: number, signal: AbortSignal): Promise<void> {
    try {
      while (!signal.aborted) {
        const w = await repo.webhookForDelivery(this.db, id);
        if (!w || w.active !== 1 || w.lease_owner !== this.owner) return;
        // both on the database's clock: another server may have scheduled the retry
        const due = w.next_attempt_at ? Date.parse(w.next_attempt_at) - Date.parse(w.db_now) : 0;
        if (due > 0) {
          // backing off; look again now and then, so a pause, a removal or a resume is seen
          await sleepOn(this.clock, Math.min(due, IDLE_MS), signal);
          continue;
        }
        const cursor = Number(w.cursor);
        const kinds = parseJson<string[] | null>(w.kinds, null);
        const rows = await changesAfter(this.db, w.production_id, cursor, BATCH);
        // a grant that lapsed before the next change was made is announced before it, so an
        // engagement hears of things in the order they happened however far behind it is
        const expiries =
          w.engagement_id === null ? [] : await this.expiriesDue(w, kinds, rows[0]?.at ?? nowIso());
        if (expiries.length === 0 && rows.length === 0) {
          await this.watch.next(w.production_id, cursor, await this.idleWait(w), signal);
          continue;
        }
        const outgoing = expiries.length > 0 ? expiries : await this.changesOut(w, rows, kinds);
        if ((await this.deliverBatch(w, outgoing, signal)) === 'lost') return;
      }
    } finally {
      await repo.releaseLease(this.db, id, this.owner).catch((err) => this.options.onError?.(err));
    }
  }

  /** The changes of a batch as this subscription is told them: filtered by kinds and, for an engagement, by its reach now. */
  private async changesOut(w: Subscription, rows: ChangeRow[], kinds: string[] | null): Promise<Outgoing[]> {
    const told = w.engagement_id === null ? null : await this.engagementTold(w, w.engagement_id, rows);
    return rows.map((row) => {
      const change = toChange(row);
      return {
        cursor: Number(row.id),
        expiry: null,
        skip: (kinds !== null && !kinds.includes(row.kind)) || (told !== null && !told.has(Number(row.id))),
        event:
          w.engagement_id === null
            ? { webhook_id: w.id, production: w.production_code, change }
            : {
                webhook_id: w.id,
                production: w.production_code,
                engagement_id: w.engagement_id,
                // who made a change is the production's business: an engagement is told what, not who
                change: { ...change, actor: null },
              },
        deliveryId: `${w.id}.${row.id}`,
      };
    });
  }

  /**
   * Which changes of a batch the engagement may be told of, judged now through its clamp (read
   * afresh: a grant revoked a moment ago already counts): at most five queries for the batch.
   */
  private async engagementTold(
    w: Subscription,
    engagementId: number,
    rows: ChangeRow[],
  ): Promise<Set<number>> {
    const clamp = await Clamp.forEngagement(this.db, w.production_id, engagementId, {
      kinds: ['delivery'],
      departments: false,
    });
    if (!clamp.active) return new Set();
    const facts = await repo.changeFacts(this.db, w.production_id, rows);
    return new Set(
      rows
        .filter((r) => engagementHears(clamp, { kind: r.kind, id: r.object_id }, facts))
        .map((r) => Number(r.id)),
    );
  }

  /** Where the subscription stands among its engagement's expiries (from its creation, at first). */
  private static expiryPosition(w: Subscription): repo.ExpiryPosition {
    return { at: w.expiries_at ?? w.created_at, grantId: w.expiries_grant_id ?? 0 };
  }

  /**
   * The grants of an engagement webhook's engagement that have lapsed (by `upTo`: now, or when the
   * next change to deliver was made) since it last announced one, as events `{kind: 'grant', id, op: 'expired'}` at the moment each lapsed (an archived
   * engagement is told nothing; its position still moves).
   */
  private async expiriesDue(w: Subscription, kinds: string[] | null, upTo: string): Promise<Outgoing[]> {
    const engagementId = w.engagement_id!;
    const due = await repo.expiriesDue(
      this.db,
      w.production_id,
      engagementId,
      WebhookWorker.expiryPosition(w),
      upTo,
      BATCH,
    );
    if (due.length === 0) return [];
    const clamp = await Clamp.forEngagement(this.db, w.production_id, engagementId, { kinds: ['delivery'] });
    const cursor = Number(w.cursor);
    return due.map((g) => ({
      cursor,
      expiry: { at: g.expires_at, grantId: g.id },
      skip: !clamp.active || (kinds !== null && !kinds.includes('grant')),
      event: {
        webhook_id: w.id,
        production: w.production_code,
        engagement_id: engagementId,
        change: {
          cursor: encodeCursor(cursor),
          at: g.expires_at,
          kind: 'grant',
          id: g.id,
          op: 'expired',
          actor: null,
        },
      },
      deliveryId: `${w.id}.expired.${g.id}.${Date.parse(g.expires_at)}`,
    }));
  }

  /** How long an idle loop waits for a commit: for an engagement webhook, no later than its next grant lapses. */
  private async idleWait(w: Subscription): Promise<number> {
    const longest = IDLE_MS;
    if (w.engagement_id === null) return longest;
    const next = await repo.nextExpiry(this.db, w.production_id, w.engagement_id, nowIso());
    if (next === null) return longest;
    return Math.max(0, Math.min(longest, Date.parse(next) - Date.now() + EXPIRY_SLACK_MS));
  }

  /**
   * Delivers a batch in order, stopping at the first failure. Delivered attempts are recorded
   * (with the cursor) every FLUSH_EVERY deliveries or FLUSH_MS, not one transaction each: a
   * crash in between re-delivers at most that many (at least once allows it), and the
   * throughput stays with the receiver instead of the database's commit rate.
   */
  private async deliverBatch(
    w: Subscription,
    batch: Outgoing[],
    signal: AbortSignal,
  ): Promise<'done' | 'lost'> {
    const pending: repo.Attempt[] = [];
    let position = Number(w.cursor);
    let expiries: repo.ExpiryPosition | undefined;
    let flushedAt = performance.now();
    const flush = async (next: { cursor: number; failures: number; retryInMs: number | null }) => {
      const ok = await repo.recordAttempts(this.db, this.owner, w.id, pending, {
        ...next,
        expiries,
        leaseMs: LEASE_MS,
      });
      this.attempts += pending.length;
      if (this.attempts >= PRUNE_EVERY) {
        this.attempts = 0;
        await repo.pruneDeliveries(this.db, w.id, LOG_KEEP);
      }
      pending.length = 0;
      flushedAt = performance.now();
      return ok;
    };
    const passed = (item: Outgoing) => {
      position = item.cursor;
      if (item.expiry) expiries = item.expiry;
    };
    for (const item of batch) {
      if (signal.aborted) break;
      // left out: the position moves over it with the next record
      if (item.skip) {
        passed(item);
        continue;
      }
      const attempt = await this.attempt(w, item, signal);
      if (!attempt) break; // stopping: not an attempt, the change is delivered again after the restart
      this.options.onAttempt?.(attempt);
      pending.push(attempt);
      if (!attempt.delivered) {
        const failures = w.failures + 1;
        const { retryBaseMs, retryMaxMs } = this.options.config;
        // 1×, 2×, 4×, … the base, capped, with up to 10% jitter so receivers coming back are not stampeded
        const delay =
          Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(failures - 1, 30)) * (1 + Math.random() * 0.1);
        // the position stays before the failed item (after any delivered or left out before it)
        const ok = await flush({
          cursor: position,
          failures,
          retryInMs: delay,
        });
        return ok ? 'done' : 'lost';
      }
      passed(item);
      w.failures = 0;
      if (pending.length >= FLUSH_EVERY || performance.now() - flushedAt > FLUSH_MS) {
        if (!(await flush({ cursor: position, failures: 0, retryInMs: null }))) return 'lost';
      }
    }
    if (pending.length > 0 || position > Number(w.cursor) || expiries !== undefined) {
      if (!(await flush({ cursor: position, failures: 0, retryInMs: null }))) return 'lost';
    }
    return 'done';
  }

  /**
   * One POST of one change; answers the attempt to log, or null when the worker is stopping.
   * A connection that fails without an HTTP answer (refused, reset, unresolved, timed out) is
   * logged as the timeout, and only once the timeout has passed: its wording, its duration
   * and the moment it is recorded (and so the next attempt) are those of a receiver that
   * never answered, so the log cannot tell a closed port (refused in a millisecond) from an
   * open one that keeps silent.
   */
  private async attempt(w: Subscription, item: Outgoing, signal: AbortSignal): Promise<repo.Attempt | null> {
    const { timeoutMs } = this.options.config;
    const body = JSON.stringify(item.event);
    const timestamp = Math.floor(Date.now() / 1000);
    const started = this.clock.now();
    let statusCode: number | null = null;
    let failure: unknown = null;
    const attempt = new AbortController();
    const cancelTimeout = this.clock.after(timeoutMs, () => attempt.abort());
    const stop = () => attempt.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      statusCode = await this.egress.post(
        new URL(w.url),
        {
          'content-type': 'application/json',
          'user-agent': this.options.userAgent,
          [SIGNATURE_HEADER]: signatureHeader(w.secret, timestamp, body),
          'prodgraph-delivery': item.deliveryId,
        },
        body,
        attempt.signal,
      );
    } catch (err) {
      failure = err;
    } finally {
      cancelTimeout();
      signal.removeEventListener('abort', stop);
    }
    // stopping: an attempt cut short is not one, the change is delivered again after the restart
    if (failure !== null && signal.aborted) return null;
    let durationMs = Math.round(this.clock.now() - started);
    if (failure instanceof RefusedAddress) {
      // judged before any connection was made: nothing was timed
      durationMs = 0;
    } else if (failure !== null) {
      await sleepOn(this.clock, timeoutMs - (this.clock.now() - started), signal);
      if (signal.aborted) return null;
      durationMs = timeoutMs;
    }
    return {
      webhookId: w.id,
      changeId: item.cursor,
      expiredGrantId: item.expiry ? item.expiry.grantId : null,
      attempt: w.failures + 1,
      at: nowIso(),
      statusCode,
      error: failure === null ? statusError(statusCode!) : failureError(failure, timeoutMs),
      durationMs,
      delivered: failure === null && statusCode! >= 200 && statusCode! <= 299,
    };
  }
}

/** Why an answered attempt failed, or null when it was delivered (2xx). */
function statusError(statusCode: number): string | null {
  return statusCode < 200 || statusCode > 299 ? `the receiver answered ${statusCode}` : null;
}

/**
 * One wording for every way a connection fails (refused, reset, unresolved, timed out): the
 * log must not tell an open port from a closed one.
 */
function failureError(failure: unknown, timeoutMs: number): string {
  return failure instanceof RefusedAddress
    ? 'not delivered: the receiver’s address is one webhooks may not reach (link-local and metadata addresses never; loopback and private ones only when the server’s PRODGRAPH_WEBHOOK_ALLOW lists them)'
    : `no answer within ${timeoutMs} ms: the receiver could not be reached or did not answer`;
}
