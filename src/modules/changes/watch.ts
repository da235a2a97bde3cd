import { onCommit } from '../../db/change-signal.js';
import type { Db } from '../../db/index.js';
import { headsOf } from './repository.js';

interface Waiter {
  productionId: number;
  afterId: number;
  wake: () => void;
}

/**
 * Tells a waiting reader (a long-polling feed request, a webhook delivery loop) that its
 * production may have a change after the one it last saw. Commits made in this process wake it
 * at once (src/db/change-signal.ts); commits made by any other process on the same database
 * (a second server, the CLI, a re-import) are seen by one small query every `pollMs`, run only
 * while someone waits, whatever the number of waiters. A wake-up may be spurious: the reader
 * looks again and waits again.
 */
export class ChangeWatch {
  private readonly waiters = new Set<Waiter>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly db: Db,
    private readonly pollMs = 250,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.unsubscribe = onCommit((productionId) => {
      for (const w of this.waiters) if (w.productionId === productionId) w.wake();
    });
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
          clearTimeout(timeout);
          signal?.removeEventListener('abort', waiter.wake);
          this.waiters.delete(waiter);
          if (this.waiters.size === 0) this.stopPolling();
          resolve(!this.closed);
        },
      };
      const timeout = setTimeout(waiter.wake, timeoutMs);
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

  private async poll(): Promise<void> {
    if (this.polling || this.waiters.size === 0) return;
    this.polling = true;
    try {
      const heads = await headsOf(this.db, [...new Set([...this.waiters].map((w) => w.productionId))]);
      for (const w of [...this.waiters]) if ((heads.get(w.productionId) ?? 0) > w.afterId) w.wake();
    } catch (err) {
      this.onError(err);
    } finally {
      this.polling = false;
    }
  }
}
