/**
 * The time and the timers a long wait runs on (a held long-poll, a webhook attempt's timeout):
 * the process's own (realClock) everywhere, or one a test moves itself, so a test of a wait
 * drives it instead of sitting through it.
 */
export interface WaitClock {
  /** Milliseconds on a steady clock: only differences mean anything. */
  now(): number;
  /** Calls `fire` once `ms` have passed; the function returned cancels it. */
  after(ms: number, fire: () => void): () => void;
}

export const realClock: WaitClock = {
  now: () => performance.now(),
  after(ms, fire) {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  },
};

/** Resolves once `ms` have passed on `clock`, or at once when `signal` aborts (never rejects). */
export function sleepOn(clock: WaitClock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    let cancel = () => undefined as void;
    const done = () => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    cancel = clock.after(ms, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
