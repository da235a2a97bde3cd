/*
 * The two outer levels of a JSON document, read from a stream of bytes: the root object's keys,
 * each key's value whole, except a list, whose elements come one at a time. Only the structure is
 * scanned here, byte by byte, building nothing: each value handed over is parsed from its own
 * bytes by JSON.parse, which is native. (A general streaming tokenizer built an object for every
 * token of the document: a fifth of an import's time, and much of its garbage.)
 *
 * Every byte is checked: the separators and brackets of the two outer levels here, everything
 * inside a value by JSON.parse, so a document that is not JSON is refused somewhere, and the
 * message says at which byte.
 */

/** What the scanner hands over, in the document's order. */
export type TopLevel =
  | { kind: 'value'; key: string; value: unknown }
  | { kind: 'list'; key: string }
  | { kind: 'element'; key: string; value: unknown; i: number };

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

const enum State {
  Root,
  FirstKey,
  Key,
  Colon,
  Value,
  AfterValue,
  FirstElement,
  Element,
  AfterElement,
  Done,
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
/** Where a number or a literal (true, false, null) ends. */
const endsScalar = (b: number) => isSpace(b) || b === 0x2c || b === 0x5d || b === 0x7d;

/** A key or value being scanned: where it started, and the pieces of it read in earlier chunks. */
interface Open {
  start: number;
  pieces: Buffer[];
  type: 'nested' | 'string' | 'scalar';
  depth: number;
  inString: boolean;
  escaped: boolean;
}

export class SectionScanner {
  /** What was read so far and not yet taken; take with `splice(0)`. */
  readonly out: TopLevel[] = [];
  private state = State.Root;
  private open: Open | null = null;
  /** The byte offset of the current chunk's first byte in the document. */
  private offset = 0;
  private key = '';
  private index = 0;

  write(chunk: Buffer): void {
    let at = this.open ? this.resume(chunk, 0) : 0;
    while (at < chunk.length && !this.open) at = this.step(chunk, at);
    if (this.open) {
      this.open.pieces.push(chunk.subarray(this.open.start));
      this.open.start = 0;
    }
    this.offset += chunk.length;
  }

  end(): void {
    if (this.state !== State.Done || this.open) {
      this.fail(this.offset, 'the document ends before its closing "}"');
    }
  }

  /** One structural byte (or the start of a key or a value) at `at`; returns where to go on. */
  private step(chunk: Buffer, at: number): number {
    const b = chunk[at]!;
    if (isSpace(b)) return at + 1;
    switch (this.state) {
      case State.Root:
        if (b !== 0x7b) this.fail(this.offset + at, 'the document must be one JSON object');
        this.state = State.FirstKey;
        return at + 1;
      case State.FirstKey:
        if (b === 0x7d) {
          this.state = State.Done;
          return at + 1;
        }
        return this.startKey(chunk, at, b);
      case State.Key:
        return this.startKey(chunk, at, b);
      case State.Colon:
        if (b !== 0x3a) this.fail(this.offset + at, 'expected ":" after a key');
        this.state = State.Value;
        return at + 1;
      case State.Value:
        if (b === 0x5b) {
          this.out.push({ kind: 'list', key: this.key });
          this.state = State.FirstElement;
          this.index = 0;
          return at + 1;
        }
        return this.startValue(chunk, at, b);
      case State.AfterValue:
        return this.separator(at, b, 0x7d, State.Key, State.Done, '"," or "}" after a value');
      case State.FirstElement:
        if (b === 0x5d) {
          this.state = State.AfterValue;
          return at + 1;
        }
        return this.startValue(chunk, at, b);
      case State.Element:
        return this.startValue(chunk, at, b);
      case State.AfterElement:
        return this.separator(at, b, 0x5d, State.Element, State.AfterValue, '"," or "]" after an element');
      case State.Done:
        return this.fail(this.offset + at, 'nothing may follow the closing "}"');
    }
  }

  private separator(at: number, b: number, close: number, next: State, closed: State, what: string): number {
    if (b === 0x2c) this.state = next;
    else if (b === close) this.state = closed;
    else this.fail(this.offset + at, `expected ${what}`);
    return at + 1;
  }

  /** A key is scanned like a string value; the state (a key is expected) says what it is. */
  private startKey(chunk: Buffer, at: number, b: number): number {
    if (b !== QUOTE) this.fail(this.offset + at, 'expected a key in double quotes');
    return this.startValue(chunk, at, b);
  }

  private startValue(chunk: Buffer, at: number, b: number): number {
    const type = b === 0x7b || b === 0x5b ? 'nested' : b === QUOTE ? 'string' : 'scalar';
    if (type === 'scalar' && endsScalar(b)) this.fail(this.offset + at, 'expected a value');
    this.open = { start: at, pieces: [], type, depth: 1, inString: type === 'string', escaped: false };
    return this.resume(chunk, at + 1);
  }

  /** Scans on for the end of the open key or value; once it ends, hands it over. */
  private resume(chunk: Buffer, from: number): number {
    const open = this.open!;
    const end = scan(open, chunk, from);
    if (end < 0) return chunk.length;
    this.open = null;
    const value = this.parse(open, chunk, end);
    if (this.state === State.FirstKey || this.state === State.Key) {
      // scanned from its opening quote to its closing one: JSON.parse can only make a string of it
      this.key = value as string;
      this.state = State.Colon;
    } else if (this.state === State.Value) {
      this.out.push({ kind: 'value', key: this.key, value });
      this.state = State.AfterValue;
    } else {
      this.out.push({ kind: 'element', key: this.key, value, i: this.index++ });
      this.state = State.AfterElement;
    }
    return end;
  }

  /** The value's bytes, from its first piece to `end` of this chunk, parsed. */
  private parse(open: Open, chunk: Buffer, end: number): unknown {
    const tail = chunk.subarray(open.start, end);
    const bytes = open.pieces.length === 0 ? tail : Buffer.concat([...open.pieces, tail]);
    const started = this.offset - (bytes.length - end);
    // outside the try: a value too long for one string (ERR_STRING_TOO_LONG) is not a syntax error
    const text = bytes.toString('utf8');
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new JsonSyntaxError(`in the value at byte ${started}: ${(err as Error).message}`);
    }
  }

  private fail(byte: number, why: string): never {
    throw new JsonSyntaxError(`at byte ${byte}: ${why}`);
  }
}

/**
 * Scans `chunk` from `from` for the end of the open value; returns the offset just past it,
 * or -1 when the chunk ends first (the state is kept in `open` for the next chunk).
 */
function scan(open: Open, chunk: Buffer, from: number): number {
  const n = chunk.length;
  if (open.type === 'scalar') {
    for (let i = from; i < n; i++) if (endsScalar(chunk[i]!)) return i;
    return -1;
  }
  let { depth, inString, escaped } = open;
  for (let i = from; i < n; i++) {
    const b = chunk[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (b === BACKSLASH) escaped = true;
      else if (b === QUOTE) {
        inString = false;
        if (open.type === 'string') return i + 1;
      }
    } else if (b === QUOTE) inString = true;
    else if (b === 0x7b || b === 0x5b) depth++;
    else if (b === 0x7d || b === 0x5d) {
      if (--depth === 0) return i + 1;
    }
  }
  open.depth = depth;
  open.inString = inString;
  open.escaped = escaped;
  return -1;
}
