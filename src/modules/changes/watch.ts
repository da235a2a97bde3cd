import { commitNewsOf, onCommit, type CommitNews } from '../../db/change-signal.js';
import type { ChangeWaiter } from '../../context.js';
import type { Db } from '../../db/index.js';
import { realClock, type WaitClock } from '../../util/wait-clock.js';
import { headsOf } from './repository.js';

interface Waiter {
  productionId: number;
  afterId: number;
  wake: () => void;
}

/**
 * Tells a waiting reader (a long-polling feed request, a webhook delivery loop) that its
 * production may have a change after the one it last saw. Commits made in this process wake it
 * at once (announceCommit), and so, on PostgreSQL, do those of every other process on
 * the schema, announced by the database (CommitListener). Where nothing announces
 * them (SQLite; PostgreSQL while the listening connection is down) other processes' commits are
 * seen by one small query every `pollMs`, run only while someone waits, whatever the number of
 * waiters; when the listening connection is back, one such query catches up with the commits
 * it missed. A wake-up may be spurious: the reader looks again and waits again.
 */
export class ChangeWatch implements ChangeWaiter {
  private readonly waiters = new Set<Waiter>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private lookAgain = false;
  private closed = false;
  private readonly unsubscribe: () => void;
  private readonly news: CommitNews | undefined;
  private readonly catchUp = () => void this.poll(true);

  constructor(
    private readonly db: Db,
    private readonly pollMs = 250,
    private readonly onError: (err: unknown) => void = () => undefined,
    // what a waiter's timeout runs on (a test's own clock, to end a wait without sitting through it)
    private readonly clock: WaitClock = realClock,
  ) {
    this.unsubscribe = onCommit((productionId) => {
      for (const w of this.waiters) if (w.productionId === productionId) w.wake();
    });
    this.news = commitNewsOf(db);
    this.news?.on('up', this.catchUp);
  }

  /**
   * Resolves once the production may have a change after `afterId`, after `timeoutMs`, when
   * `signal` aborts or when the watch closes, whichever comes first: true while the watch is
   * open, false once it has closed (the server is stopping: stop waiting).
   */
  next(productionId: number, afterId: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || timeoutMs <= 0 || signal?.aborted) return Promise.resolve(!this.closed);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        productionId,
        afterId,
        wake: () => {
          cancelTimeout();
          signal?.removeEventListener('abort', waiter.wake);
          this.waiters.delete(waiter);
          if (this.waiters.size === 0) this.stopPolling();
          resolve(!this.closed);
        },
      };
      const cancelTimeout = this.clock.after(timeoutMs, waiter.wake);
      signal?.addEventListener('abort', waiter.wake, { once: true });
      this.waiters.add(waiter);
      this.startPolling();
    });
  }

  /** How many readers wait right now (the metrics' change-feed waiters). */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Releases every waiter; later calls to next() answer at once. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.news?.off('up', this.catchUp);
    for (const w of [...this.waiters]) w.wake();
    this.stopPolling();
  }

  private startPolling(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  private stopPolling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Looks at the heads, unless every commit is being announced (and this is no catching up). */
  private async poll(catchingUp = false): Promise<void> {
    // a look already under way may have read the heads before the connection listened again
    if (this.polling && catchingUp) this.lookAgain = true;
    if (this.polling || this.waiters.size === 0) return;
    if (this.news?.listening && !catchingUp) return;
    this.polling = true;
    try {
      const heads = await headsOf(this.db, [...new Set([...this.waiters].map((w) => w.productionId))]);
      for (const w of [...this.waiters]) if ((heads.get(w.productionId) ?? 0) > w.afterId) w.wake();
    } catch (err) {
      this.onError(err);
    } finally {
      this.polling = false;
      if (this.lookAgain) {
        this.lookAgain = false;
        void this.poll(true);
      }
    }
  }
}
