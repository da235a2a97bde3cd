/**
 * Positions that keep the document's order while moving as few stored rows as possible, so a
 * sync that removes an object or adds one does not rewrite every row after it. Positions are
 * spaced (a new list is numbered 0, 16, 32, …) so an object inserted between two others fits
 * in the gap; only a reordering, or an insertion into a full gap, renumbers the whole list.
 */

const GAP = 16;

export function orderPositions(wantedKeys: readonly string[], stored: ReadonlyMap<string, number>): number[] {
  const renumber = () => wantedKeys.map((_, i) => i * GAP);
  const out: Array<number | null> = wantedKeys.map((k) => stored.get(k) ?? null);
  let last = -Infinity;
  for (const p of out) {
    if (p === null) continue;
    if (p <= last) return renumber();
    last = p;
  }
  // fill each run of new objects between its stored neighbours
  let i = 0;
  while (i < out.length) {
    if (out[i] !== null) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && out[j] === null) j++;
    const count = j - i;
    // the stored neighbours of the run (none before the first object, none after the last)
    const before = out[i - 1] ?? null;
    const after = out[j] ?? null;
    if (before === null) {
      if (after === null) return renumber();
      for (let k = 0; k < count; k++) out[i + k] = after - (count - k) * GAP;
    } else if (after === null) {
      for (let k = 0; k < count; k++) out[i + k] = before + (k + 1) * GAP;
    } else {
      if (after - before - 1 < count) return renumber();
      for (let k = 0; k < count; k++)
        out[i + k] = before + Math.floor(((after - before) * (k + 1)) / (count + 1));
    }
    i = j;
  }
  return out as number[];
}
