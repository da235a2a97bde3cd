import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Db } from '../../db/index.js';
import { pruneBatch, readDatabaseNow } from './repository.js';

const DAY_MS = 86_400_000;

/**
 * Removes audit rows older than the retention, counted back from the database's clock, in
 * batches (each its own short statement, the event loop free between them), so a server that
 * was off for a year catches up without holding the table. Several servers pruning at once only
 * delete the same old rows; nothing is lost that was not due.
 */
export async function pruneAudit(db: Db, retentionDays: number, batch = 1000): Promise<number> {
  const now = Date.parse(await readDatabaseNow(db));
  const cutoff = new Date(now - retentionDays * DAY_MS).toISOString();
  let removed = 0;
  for (;;) {
    const n = await pruneBatch(db, cutoff, batch);
    removed += n;
    if (n < batch) return removed;
    await nextTurn();
  }
}

/** Prunes at start and then every `everyMs` while the server runs (`serve` starts it). */
export class AuditPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly retentionDays: number,
    private readonly onError: (err: unknown) => void,
    private readonly everyMs = 3_600_000,
  ) {}

  start(): void {
    const run = () => {
      this.running = pruneAudit(this.db, this.retentionDays).catch(this.onError);
    };
    run();
    this.timer = setInterval(run, this.everyMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
