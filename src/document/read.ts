import { open, readFile } from 'node:fs/promises';
import type { Section } from './check.js';
import { JsonSyntaxError, SectionScanner } from './load/json-sections.js';
import { jsonFileSource, type DocumentSource } from './load/source.js';
import { checkProductionBlock } from './load/validate.js';
import { DocumentError, parseDocument, readFailure, validDocument } from './parse.js';
import type { ProductionDocument } from './schema.js';

/*
 * Reading a document from a file. JSON is read as a stream (a document of any size: a generated
 * season at scale 10 is larger than one string can hold); YAML is read whole, and documents that
 * large are not expected in YAML. A first import takes the stream object by object; a sync needs
 * the document whole, and assembles it from the same stream (never one giant string).
 */

export interface OpenedDocument {
  production: ProductionDocument['production'];
  /** Read as a stream (JSON): a first import can take it object by object. */
  streamed: boolean;
  /** The objects one at a time, for a first import. */
  source(): DocumentSource;
  /** The whole document, checked against the schema (a sync or a plan of one). */
  whole(): Promise<ProductionDocument>;
}

async function looksLikeJson(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'r');
    const head = Buffer.alloc(256);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return head.toString('utf8', 0, bytesRead).trimStart().startsWith('{');
  } catch (err) {
    throw readFailure(err, file);
  } finally {
    await handle?.close();
  }
}

/** The production block of a JSON document, read up to it and no further. */
async function productionOf(file: string): Promise<ProductionDocument['production']> {
  const scanner = new SectionScanner();
  let found: unknown;
  const stream = (await open(file, 'r')).createReadStream({ highWaterMark: 1 << 16 });
  try {
    for await (const chunk of stream) {
      scanner.write(chunk as Buffer);
      for (const e of scanner.out.splice(0)) {
        if (e.key !== 'production' || e.kind === 'element') continue;
        if (e.kind === 'list') throw new DocumentError('production: must be an object.');
        found = e.value;
      }
      if (found !== undefined) break;
    }
    // read to the end without a production block: say so only if the JSON itself is whole
    if (found === undefined) scanner.end();
  } catch (err) {
    throw err instanceof JsonSyntaxError
      ? new DocumentError(`${file}: not valid JSON (${err.message})`)
      : readFailure(err, file);
  } finally {
    stream.destroy();
  }
  if (found === undefined) throw new DocumentError('production: is required.');
  checkProductionBlock(found);
  return found as ProductionDocument['production'];
}

/** Assembles a streamed document, section by section, then checks it whole. */
async function assemble(file: string): Promise<ProductionDocument> {
  const doc: Record<string, unknown> = {};
  await jsonFileSource(file).read({
    async setProduction(p) {
      doc.production = p;
    },
    async add(section: Section, item) {
      ((doc[section] ??= []) as unknown[]).push(item);
    },
  });
  return validDocument(doc, file);
}

export async function openDocument(file: string): Promise<OpenedDocument> {
  if (await looksLikeJson(file)) {
    try {
      const production = await productionOf(file);
      return { production, streamed: true, source: () => jsonFileSource(file), whole: () => assemble(file) };
    } catch (err) {
      // not JSON after all (YAML's flow style starts with a brace too): read it as YAML below
      if (!(err instanceof DocumentError) || !/not valid JSON/.test(err.message)) throw err;
    }
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw readFailure(err, file);
  }
  const doc = parseDocument(text, file);
  return {
    production: doc.production,
    streamed: false,
    source: () => {
      throw new Error('internal: a parsed document is imported whole');
    },
    whole: async () => doc,
  };
}
