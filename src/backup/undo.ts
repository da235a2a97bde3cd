import { mkdir, rm } from 'node:fs/promises';
import { BackupError } from './manifest.js';

/**
 * What a backup or a restore has made so far, so that one failing part-way (a row count that
 * does not match, a damaged file, a disk that fills) removes it and leaves the place as it found
 * it: no half-written database, no half-filled folder. A step is registered only once what it
 * removes exists and is known to be the command's own, so a refusal removes nothing.
 */
export class Undo {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown> }> = [];

  add(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  /** Removes everything registered, the last made first; answers what could not be removed. */
  async run(): Promise<string[]> {
    const left: string[] = [];
    for (const step of this.steps.reverse()) {
      try {
        await step.run();
      } catch (err) {
        left.push(`${step.what} (${(err as Error).message})`);
      }
    }
    this.steps.length = 0;
    return left;
  }

  /** What was made now stands (the command reached its commit): nothing of it is undone any more. */
  keep(): void {
    this.steps.length = 0;
  }

  /** Undoes, then answers the error to throw: `err` itself, or one that also names what is left over. */
  async failed(err: unknown): Promise<unknown> {
    const left = await this.run();
    if (left.length === 0) return err;
    const reason = err instanceof Error ? err.message : String(err);
    return new BackupError(`${reason}; could not remove what was made: ${left.join(', ')}`, { cause: err });
  }
}

/** The folder a new file goes in, made when missing; with `undo`, removed again on failure when it was made. */
export async function folderFor(dir: string, undo: Undo): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (created) undo.add(created, () => rm(created, { recursive: true, force: true }));
}
