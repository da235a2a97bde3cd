import type { PausePoint } from '../config.js';

/**
 * The points a backup passes, in order: `staging` (its staging folder made, nothing copied),
 * `database` (about to copy the database), `media` (the database copied, about to place the
 * files), `media-file` (after each file), `manifest` (everything written, about to rename the
 * staging folder into place).
 */
export type BackupStep = 'staging' | 'database' | 'media' | 'media-file' | 'manifest';

/**
 * The points a restore passes, in order: `staging` (leftovers of killed runs cleared, staging
 * made, nothing written), `database` (the database loaded into its staging place and checked),
 * `media-file` (after each file placed in the staging folder), `media` (every file staged),
 * `media-placed` (the media folder in place, the database not yet), `committed` (the database in
 * place; only the media folder's note is left to remove).
 */
export type RestoreStep = 'staging' | 'database' | 'media-file' | 'media' | 'media-placed' | 'committed';

/** Told of each step as it is reached; the command goes on once a returned promise settles. */
export type OnStep<S extends string> = (step: S) => void | Promise<void>;

/**
 * The CLI's hook for PRODGRAPH_TEST_PAUSE_AT: at the Nth time `point.step` is reached, says so
 * (`paused at STEP`) and never goes on, so a test kills the process at exactly that point.
 */
export function pauseAt<S extends string>(point: PausePoint, say: (line: string) => void): OnStep<S> {
  let seen = 0;
  return async (step) => {
    if (step !== point.step || ++seen !== point.nth) return;
    say(`paused at ${step}${point.nth > 1 ? `:${point.nth}` : ''}`);
    // a pending promise alone lets the process exit: the timer keeps it alive until it is killed
    await new Promise<never>(() => setInterval(() => undefined, 1 << 30));
  };
}
