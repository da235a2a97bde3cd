/**
 * Pairs two lists item by item: the rows a section read and the keys or positions computed
 * for them, the objects a batch wrote and the ids that came back. The lists are the same
 * length by construction; a mismatch is a bug here, so it throws instead of pairing with
 * `undefined`.
 */
export function zip<A, B>(a: readonly A[], b: readonly B[]): Array<[A, B]> {
  if (a.length !== b.length) throw new Error(`internal: pairing ${a.length} items with ${b.length}`);
  const out: Array<[A, B]> = [];
  const rest = b.values();
  for (const x of a) {
    const next = rest.next();
    if (next.done) break;
    out.push([x, next.value]);
  }
  return out;
}
