import { EventEmitter } from 'node:events';

/*
 * In-process news that a production's changes have committed: the change feed's long-polls and
 * the webhook worker wake on it at once instead of waiting for their next look at the table.
 * Announced after the commit, never inside the transaction, so a woken reader sees the rows.
 * Process-wide on purpose: every app in the process reads the same database or, in tests,
 * merely wakes spuriously and looks again. Other processes' commits are seen by polling
 * (src/modules/changes/signal.ts).
 */
const bus = new EventEmitter();
bus.setMaxListeners(0);

export function announceCommit(productionId: number): void {
  bus.emit('commit', productionId);
}

/** Calls `listener` with the production id after each commit that changed something; answers the unsubscribe. */
export function onCommit(listener: (productionId: number) => void): () => void {
  bus.on('commit', listener);
  return () => bus.off('commit', listener);
}
