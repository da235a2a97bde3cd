/** Told of each transaction a driver committed (the write path's groups are counted by it). */
export type TransactionCounter = () => void;

/** A savepoint statement, its name quoted as an identifier. */
export const savepointSql = (command: 'savepoint' | 'rollback to' | 'release', name: string): string =>
  `${command} "${name.replace(/"/g, '""')}"`;

/** One holder at a time, the others queued in order (SQLite's one connection). */
export class Mutex {
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;

  async lock(): Promise<void> {
    while (this.held) await this.held;
    this.held = new Promise((resolve) => (this.release = resolve));
  }

  unlock(): void {
    const release = this.release;
    this.held = undefined;
    this.release = undefined;
    release?.();
  }
}
