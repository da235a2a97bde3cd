import { pathOf } from '../../validation.js';
import type { Path, RefInfo, RefKind } from '../check-items.js';
import { fail } from '../check-items.js';

/*
 * Every ref of a document being loaded, what it names and the id it got, held compactly: a
 * generated season at scale 10 declares over three million refs, so each is one map entry
 * (ref → slot) and a few numbers in typed arrays, not an object.
 */

const KINDS: RefKind[] = [
  'episode',
  'organisation',
  'department',
  'person',
  'scene',
  'asset',
  'version',
  'ingredient',
  'shoot_day',
  'approval',
  'department_note',
  'delivery',
  'engagement',
  'purchase_order',
  'script_change',
  'job',
];
const CHARACTER = 0x80;
const SECTIONS: string[] = [];

function grow<A extends Int32Array | Uint8Array | Float64Array>(a: A, need: number): A {
  if (need <= a.length) return a;
  const next = new (a.constructor as new (n: number) => A)(Math.max(need, a.length * 2));
  next.set(a);
  return next;
}

export class RefTable {
  private readonly slots = new Map<string, number>();
  private readonly names: string[] = [];
  private kinds = new Uint8Array(1024);
  private ids = new Float64Array(1024);
  private owners = new Int32Array(1024);
  /** Where each ref was declared: section, then up to three indexes (-1: none). */
  private where = new Int32Array(4 * 1024);

  get size(): number {
    return this.names.length;
  }

  declare(ref: string, info: RefInfo, path: Path): void {
    const seen = this.slots.get(ref);
    if (seen !== undefined) fail(path, `the ref "${ref}" is already used at ${pathOf(this.pathOf(seen))}`);
    const slot = this.names.length;
    this.names.push(ref);
    this.slots.set(ref, slot);
    this.kinds = grow(this.kinds, slot + 1);
    this.ids = grow(this.ids, slot + 1);
    this.owners = grow(this.owners, slot + 1);
    this.where = grow(this.where, 4 * (slot + 1));
    this.kinds[slot] = KINDS.indexOf(info.kind) | (info.character ? CHARACTER : 0);
    this.ids[slot] = NaN;
    this.owners[slot] = info.owner === undefined ? -1 : (this.slots.get(info.owner) ?? -1);
    this.remember(slot, path);
  }

  private remember(slot: number, path: Path): void {
    let section = SECTIONS.indexOf(String(path[0]));
    if (section < 0) section = SECTIONS.push(String(path[0])) - 1;
    // the numbers of a path, in order: assets[i].versions[j].ingredients[k]
    const numbers = path.filter((p): p is number => typeof p === 'number');
    this.where[4 * slot] = section;
    for (let n = 0; n < 3; n++) this.where[4 * slot + 1 + n] = numbers[n] ?? -1;
  }

  /** The path a ref was declared at, rebuilt for an error message. */
  private pathOf(slot: number): Path {
    const [section = -1, i = -1, j = -1, k = -1] = this.where.subarray(4 * slot, 4 * slot + 4);
    const name = SECTIONS[section] ?? '?';
    if (name === 'departments') return [name, i, 'slug'];
    if (j < 0) return [name, i, 'ref'];
    if (k < 0) return [name, i, 'versions', j, 'ref'];
    return [name, i, 'versions', j, 'ingredients', k, 'ref'];
  }

  info(ref: string): RefInfo | undefined {
    const slot = this.slots.get(ref);
    if (slot === undefined) return undefined;
    const code = this.kinds[slot];
    const kind = code === undefined ? undefined : KINDS[code & ~CHARACTER];
    if (code === undefined || kind === undefined) return undefined;
    const owner = this.owners[slot] ?? -1;
    return {
      kind,
      character: (code & CHARACTER) !== 0,
      ...(owner >= 0 ? { owner: this.names[owner] } : {}),
    };
  }

  setId(ref: string, id: number): void {
    const slot = this.slots.get(ref);
    if (slot !== undefined) this.ids[slot] = id;
  }

  /** The id of a declared ref once its object is written; undefined before. */
  idOf(ref: string): number | undefined {
    const slot = this.slots.get(ref);
    if (slot === undefined) return undefined;
    const id = this.ids[slot];
    return id === undefined || Number.isNaN(id) ? undefined : id;
  }

  /** Every ref with its id, as the import answers them. */
  toRecord(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [slot, ref] of this.names.entries()) {
      const id = this.ids[slot];
      if (id !== undefined && !Number.isNaN(id)) out[ref] = id;
    }
    return out;
  }
}
