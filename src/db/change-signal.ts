import { EventEmitter } from 'node:events';

/*
 * News that a production's changes have committed: the change feed's long-polls and the webhook
 * worker wake on it at once instead of waiting for their next look at the table. Announced
 * after the commit, never inside the transaction, so a woken reader sees the rows.
 * Process-wide on purpose: every app in the process reads the same database or, in tests,
 * merely wakes spuriously and looks again. The worker processes of one server tell each other
 * (src/cluster/): a commit in one is relayed to its siblings, which hear it as their own.
 * Commits of any other process (a second server, the CLI, a re-import) are seen by polling
 * (src/modules/changes/watch.ts).
 */
const bus = new EventEmitter();
bus.setMaxListeners(0);

let relay: ((productionId: number) => void) | null = null;

/** A commit of this process: heard here, and relayed to the sibling workers of a cluster. */
export function announceCommit(productionId: number): void {
  bus.emit('commit', productionId);
  relay?.(productionId);
}

/** A commit a sibling worker made, heard here as if it were this process's own (never relayed back). */
export function hearCommit(productionId: number): void {
  bus.emit('commit', productionId);
}

/** Where this process's commits are relayed (a cluster worker sends them to the primary). */
export function relayCommits(to: (productionId: number) => void): void {
  relay = to;
}

/** Calls `listener` with the production id after each commit that changed something; answers the unsubscribe. */
export function onCommit(listener: (productionId: number) => void): () => void {
  bus.on('commit', listener);
  return () => bus.off('commit', listener);
}
