import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

type JumpableRandomGenerator = ReturnType<typeof xoroshiro128plus>;

/** The item at `i`, counting round the list again past its end (a generated name's word, a kind). */
export function nth<T>(list: readonly T[], i: number): T {
  const item = list[i % list.length];
  if (item === undefined) throw new Error('internal: nth of an empty list');
  return item;
}

/**
 * A seeded stream of choices. Every section of the document draws from its own stream (the
 * seed's generator jumped once per section), so adding rows to one section never shifts
 * another section's rows.
 */
export class Rng {
  private constructor(private readonly g: JumpableRandomGenerator) {}

  /** The stream for section number `stream` of the document generated from `seed`. */
  static of(seed: number, stream: number): Rng {
    const g = xoroshiro128plus(seed);
    for (let i = 0; i <= stream; i++) g.jump();
    return new Rng(g);
  }

  /** An integer in [from, to], both included. */
  int(from: number, to: number): number {
    return uniformInt(this.g, from, to);
  }

  chance(p: number): boolean {
    return this.int(0, 999_999) < p * 1_000_000;
  }

  pick<T>(items: readonly T[]): T {
    return nth(items, this.int(0, items.length - 1));
  }

  /** One item by weight: `[[value, weight], …]`. */
  weighted<T>(table: ReadonlyArray<readonly [T, number]>): T {
    const total = table.reduce((s, [, w]) => s + w, 0);
    let at = this.int(0, total - 1);
    for (const [value, w] of table) {
      if (at < w) return value;
      at -= w;
    }
    const last = table.at(-1);
    if (!last) throw new Error('internal: a weighted choice from no items');
    return last[0];
  }

  /** `count` distinct integers from [from, to] (fewer when the range is smaller), in draw order. */
  distinct(count: number, from: number, to: number): number[] {
    const want = Math.min(count, to - from + 1);
    const seen = new Set<number>();
    while (seen.size < want) seen.add(this.int(from, to));
    return [...seen];
  }
}
