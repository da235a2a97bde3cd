import type { WaitClock } from '../../src/util/wait-clock.js';

interface Timer {
  at: number;
  ms: number;
  fire: () => void;
  real?: NodeJS.Timeout;
}

/**
 * A clock for an app's long waits (AppOptions.clock) that the test moves: `advance(ms)` fires at
 * once every timer due by then, so a test of a timeout drives it instead of sitting through it.
 * Frozen (the default), its time moves only when the test says; running, it also keeps the
 * real time, for an app that must wait for real too (a retry scheduled on the database's clock).
 */
export class TestClock implements WaitClock {
  private moved = 0;
  private readonly started = performance.now();
  private readonly timers = new Set<Timer>();
  /** Keeps the process alive while a timer is pending, as a real timer would. */
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(private readonly running = false) {}

  now(): number {
    return (this.running ? performance.now() : this.started) + this.moved;
  }

  after(ms: number, fire: () => void): () => void {
    const timer: Timer = { at: this.now() + ms, ms, fire };
    this.timers.add(timer);
    this.keepAlive ??= setInterval(() => undefined, 60_000);
    if (this.running) timer.real = setTimeout(() => this.fire(timer), ms);
    return () => this.drop(timer);
  }

  /** Moves time on by `ms`, firing every timer due by then in order. */
  advance(ms: number): void {
    this.moved += ms;
    const due = [...this.timers].filter((t) => t.at <= this.now()).sort((a, b) => a.at - b.at);
    for (const timer of due) this.fire(timer);
  }

  /** How many timers set for `ms` have not fired yet (were set, so the waiting has begun). */
  armed(ms: number): number {
    return [...this.timers].filter((t) => t.ms === ms).length;
  }

  private fire(timer: Timer): void {
    if (this.drop(timer)) timer.fire();
  }

  /** Forgets a timer; false when it had already fired or been cancelled. */
  private drop(timer: Timer): boolean {
    if (!this.timers.delete(timer)) return false;
    clearTimeout(timer.real);
    if (this.timers.size === 0) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
    return true;
  }
}
