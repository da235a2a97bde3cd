import { EventEmitter } from 'node:events';
import type { Db } from './index.js';

/*
 * News that a production's changes have committed: the change feed's long-polls and the webhook
 * worker wake on it at once instead of waiting for their next look at the table. Announced
 * after the commit, never inside the transaction, so a woken reader sees the rows.
 * Process-wide on purpose: every app in the process reads the same database or, in tests,
 * merely wakes spuriously and looks again.
 *
 * Other processes' commits arrive in one of two ways. On PostgreSQL every commit is announced
 * by the database itself (NOTIFY in the writing transaction, commitChanges) and each
 * server hears it on one LISTEN connection (CommitListener), whichever server, CLI
 * command or worker wrote. On SQLite the worker processes of one server relay their commits to
 * each other (relayCommits), and any other process's commits are seen by polling
 * (ChangeWatch).
 */
const bus = new EventEmitter();
bus.setMaxListeners(0);

let relay: ((productionId: number, revision: number) => void) | null = null;

/** What hears a database's announcements for a process: it skips those of this process's own commits. */
export interface CommitNews extends EventEmitter {
  /** True while commits are being announced to this process (the LISTEN connection is up). */
  readonly listening: boolean;
  /** This process committed `revision` of `productionId` and has woken its readers already. */
  committedHere(productionId: number, revision: number): void;
}

const news = new WeakMap<Db, CommitNews>();

/** Where `db`'s commits made by other processes are heard (PostgreSQL, once a server listens). */
export function registerCommitNews(db: Db, listener: CommitNews): () => void {
  news.set(db, listener);
  return () => {
    if (news.get(db) === listener) news.delete(db);
  };
}

export function commitNewsOf(db: Db): CommitNews | undefined {
  return news.get(db);
}

/** A commit of this process: heard here, and relayed to the sibling workers of a cluster. */
export function announceCommit(db: Db, productionId: number, revision: number): void {
  news.get(db)?.committedHere(productionId, revision);
  bus.emit('commit', productionId, revision);
  relay?.(productionId, revision);
}

/** A commit another process made (a sibling worker, or announced by the database), heard as if it were this process's own (never relayed). */
export function hearCommit(productionId: number, revision?: number): void {
  bus.emit('commit', productionId, revision);
}

/** Where this process's commits are relayed (a cluster worker on SQLite sends them to the primary). */
export function relayCommits(to: (productionId: number, revision: number) => void): void {
  relay = to;
}

/**
 * Calls `listener` with the production id after each commit that changed something, and the
 * revision it committed when the news carries it; answers the unsubscribe.
 */
export function onCommit(listener: (productionId: number, revision?: number) => void): () => void {
  bus.on('commit', listener);
  return () => bus.off('commit', listener);
}
