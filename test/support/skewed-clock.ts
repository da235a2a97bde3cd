/*
 * Loaded first (`node --import`) into a server process the tests start, to play a host whose
 * clock is off by PRODGRAPH_TEST_CLOCK_SKEW_MS: `Date` (now, and a new Date without arguments)
 * reads that far from the real time. Timers and `performance.now()` are untouched, as on a host
 * whose wall clock alone is wrong.
 */
const skew = Number(process.env.PRODGRAPH_TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = Date;

class SkewedDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(RealDate.now() + skew);
    else super(...(args as [string | number | Date]));
  }

  static override now(): number {
    return RealDate.now() + skew;
  }
}

globalThis.Date = SkewedDate as DateConstructor;
