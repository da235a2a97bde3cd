import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { describeValidation } from '../validation.js';
import { ProductionDocument } from './schema.js';

/** A document that cannot be imported; the message names the path of the problem once and ends a sentence. */
export class DocumentError extends Error {
  constructor(message: string) {
    super(/[.!?]$/.test(message) ? message : `${message}.`);
    this.name = 'DocumentError';
  }
}

const ajv = new Ajv({ allErrors: false, strict: false });
// ajv-formats is CommonJS: its default export arrives wrapped under ESM
const formats = ((addFormats as unknown as { default?: typeof addFormats }).default ??
  addFormats) as unknown as (a: Ajv, f: string[]) => void;
formats(ajv, ['date', 'date-time']);
const validate = ajv.compile(ProductionDocument);

function parseYamlText(text: string, source: string): unknown {
  try {
    return parseYaml(text, { uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const where = err.linePos?.[0] ? ` at line ${err.linePos[0].line}, column ${err.linePos[0].col}` : '';
      // the parser's own message repeats the position; say it once
      const reason = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?\s*$/, '');
      throw new DocumentError(`${source}: not valid YAML/JSON${where}: ${reason}`);
    }
    throw err;
  }
}

/**
 * YAML is a superset of JSON, so one parser reads both; but a document that is JSON is read
 * with JSON.parse first: the YAML parser holds a syntax tree of the whole text at once, tens
 * of bytes per token, which a generated season's document (tens of MB) cannot afford.
 */
export function parseDocument(text: string, source = 'document'): ProductionDocument {
  let data: unknown;
  if (/^\s*\{/.test(text)) {
    try {
      data = JSON.parse(text);
    } catch {
      // not valid JSON: the YAML parser below says where, in its words
    }
  }
  if (data === undefined) data = parseYamlText(text, source);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new DocumentError(`${source}: the document must be a mapping with a "production" key`);
  }
  if (!validate(data)) throw new DocumentError(describeValidation(validate.errors ?? [], 'document'));
  return data as ProductionDocument;
}

export async function readDocument(file: string): Promise<ProductionDocument> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new DocumentError(
      `${file}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseDocument(text, file);
}
