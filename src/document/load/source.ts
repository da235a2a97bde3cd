import { createReadStream } from 'node:fs';
import { Tokenizer, TokenParser } from '@streamparser/json';
import { SECTIONS, type Section } from '../check.js';
import { DocumentError, readFailure } from '../parse.js';
import type { ProductionDocument } from '../schema.js';
import { checkProductionBlock } from './validate.js';

/*
 * Where a first import's objects come from: a parsed document (its sections in the format's
 * order), or a JSON file read as a stream, section by section, object by object, in the file's
 * order, so no document is ever held whole (a generated season at scale 10 is 932 MB of JSON;
 * a string holds about 512 MB).
 */

export interface Receiver {
  setProduction(p: ProductionDocument['production']): Promise<void>;
  add(section: Section, item: unknown, i: number): Promise<void>;
}

export interface DocumentSource {
  /** Hands the production block and every object of every section to `to`, in the source's order. */
  read(to: Receiver): Promise<void>;
}

export function documentSource(doc: ProductionDocument): DocumentSource {
  return {
    async read(to) {
      await to.setProduction(doc.production);
      for (const section of SECTIONS) {
        const list = doc[section] ?? [];
        for (let i = 0; i < list.length; i++) await to.add(section, list[i], i);
      }
    },
  };
}

const KNOWN = new Set<string>(SECTIONS);

type Event =
  | { type: 'item'; section: Section; item: unknown; i: number }
  | { type: 'production'; value: Record<string, unknown> };

/**
 * Hands over each object of each top-level list (`$.*.*`) and drops it from its list at once,
 * so a list never holds more than the object being read; each top-level value (`$.*`) is seen
 * as it ends, to say what its key held (a list, the production block, or something wrong).
 */
class SectionParser {
  readonly parser = new TokenParser({ paths: ['$.*', '$.*.*'], keepStack: false });
  readonly events: Event[] = [];
  /** What is wrong with the document's shape, found as its values end. */
  problem: DocumentError | null = null;

  constructor() {
    this.parser.onValue = ({ value, key, parent, stack }) => {
      if (stack.length === 1) return this.topLevel(String(key), value);
      const top = stack[1]?.key;
      if (!Array.isArray(parent) || typeof key !== 'number' || typeof top !== 'string') return;
      parent.length -= 1;
      if (KNOWN.has(top)) this.events.push({ type: 'item', section: top as Section, item: value, i: key });
    };
  }

  private topLevel(key: string, value: unknown): void {
    if (key === 'production') {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        this.problem ??= new DocumentError('production: must be an object.');
      } else this.events.push({ type: 'production', value: value as Record<string, unknown> });
      return;
    }
    if (!KNOWN.has(key)) this.problem ??= new DocumentError(`${key}: unknown field.`);
    else if (!Array.isArray(value)) this.problem ??= new DocumentError(`${key}: must be an array.`);
  }
}

/** A JSON document read as a stream; `file` is named in the errors. */
export function jsonFileSource(file: string): DocumentSource {
  return {
    async read(to) {
      const tokenizer = new Tokenizer();
      const parser = new SectionParser();
      // assigned by the tokenizer's callbacks, which the compiler's narrowing does not see
      let failure = null as DocumentError | null;
      tokenizer.onToken = (token) => {
        if (failure === null) parser.parser.write(token);
      };
      const syntax = (err: Error) => {
        failure ??= new DocumentError(`${file}: not valid JSON (${err.message})`);
      };
      tokenizer.onError = syntax;
      parser.parser.onError = syntax;
      let root: 'unknown' | 'object' = 'unknown';
      let sawProduction = false;
      const drain = async () => {
        for (const e of parser.events.splice(0)) {
          if (e.type === 'production') {
            checkProductionBlock(e.value);
            sawProduction = true;
            await to.setProduction(e.value as ProductionDocument['production']);
          } else await to.add(e.section, e.item, e.i);
        }
      };
      try {
        for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
          if (root === 'unknown') root = checkRoot(chunk as Buffer, file);
          tokenizer.write(chunk as Buffer);
          if (failure) throw failure;
          await drain();
          if (parser.problem) throw parser.problem;
        }
        tokenizer.end();
        if (failure) throw failure;
        await drain();
        if (parser.problem) throw parser.problem;
      } catch (err) {
        throw readFailure(err, file);
      }
      if (!sawProduction) throw new DocumentError('production: is required.');
    },
  };
}

function checkRoot(chunk: Buffer, file: string): 'object' {
  const first = chunk.toString('utf8', 0, Math.min(chunk.length, 64)).trimStart()[0];
  if (first !== '{')
    throw new DocumentError(`${file}: the document must be a mapping with a "production" key`);
  return 'object';
}
