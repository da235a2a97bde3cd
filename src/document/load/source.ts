import { createReadStream } from 'node:fs';
import { SECTIONS, type Section } from '../check.js';
import { DocumentError, readFailure } from '../parse.js';
import type { ProductionDocument } from '../schema.js';
import { JsonSyntaxError, SectionScanner, type TopLevel } from './json-sections.js';
import { checkProductionBlock } from './validate.js';

/*
 * Where a first import's objects come from: a parsed document (its sections in the format's
 * order), or a JSON file read as a stream, section by section, object by object, in the file's
 * order, so no document is ever held whole (a generated season at scale 10 is larger than the
 * longest string the runtime can hold; bench/FINDINGS.md).
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

/** What each top-level entry must be: a known section's list, or the production block. */
function checkEntry(e: TopLevel): void {
  if (e.key === 'production') {
    if (e.kind === 'list' || e.value === null || typeof e.value !== 'object' || Array.isArray(e.value)) {
      throw new DocumentError('production: must be an object.');
    }
  } else if (!KNOWN.has(e.key)) throw new DocumentError(`${e.key}: unknown field.`);
  else if (e.kind === 'value') throw new DocumentError(`${e.key}: must be an array.`);
}

/** A JSON document read as a stream; `file` is named in the errors. */
export function jsonFileSource(file: string): DocumentSource {
  return {
    async read(to) {
      const scanner = new SectionScanner();
      let sawProduction = false;
      const drain = async () => {
        for (const e of scanner.out.splice(0)) {
          if (e.kind === 'element') {
            await to.add(e.key as Section, e.value, e.i);
            continue;
          }
          checkEntry(e);
          if (e.kind === 'value') {
            checkProductionBlock(e.value);
            sawProduction = true;
            await to.setProduction(e.value as ProductionDocument['production']);
          }
        }
      };
      try {
        let first = true;
        for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
          if (first) checkRoot(chunk as Buffer, file);
          first = false;
          scanner.write(chunk as Buffer);
          await drain();
        }
        scanner.end();
      } catch (err) {
        if (err instanceof JsonSyntaxError)
          throw new DocumentError(`${file}: not valid JSON (${err.message})`);
        throw readFailure(err, file);
      }
      if (!sawProduction) throw new DocumentError('production: is required.');
    },
  };
}

function checkRoot(chunk: Buffer, file: string): void {
  const first = chunk.toString('utf8', 0, Math.min(chunk.length, 64)).trimStart()[0];
  if (first !== '{')
    throw new DocumentError(`${file}: the document must be a mapping with a "production" key`);
}
