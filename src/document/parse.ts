import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { UserError } from '../errors.js';
import { onFirstUse } from '../util/first-use.js';
import { describeValidation } from '../validation.js';
import { ProductionDocument } from './schema.js';

/** A document that cannot be imported; the message names the path of the problem once and ends a sentence. */
export class DocumentError extends UserError {
  constructor(message: string) {
    super(/[.!?]$/.test(message) ? message : `${message}.`);
  }
}

const ajv = new Ajv({ allErrors: false, strict: false });
/** The document's validator instance (dates and timestamps checked), shared with the object-by-object check. */
export const documentAjv = ajv;
// ajv-formats is CommonJS: under ESM its default import is the module, the plugin is `.default`
addFormats.default(ajv, ['date', 'date-time']);
// compiled when a document is first read: most processes (a server, a command) never read one
const validator = onFirstUse(() => ajv.compile(ProductionDocument));

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
  return validDocument(data, source);
}

/** A value read from a document file, checked against the format's schema. */
export function validDocument(data: unknown, source = 'document'): ProductionDocument {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new DocumentError(`${source}: the document must be a mapping with a "production" key`);
  }
  const validate = validator();
  if (!validate(data)) throw new DocumentError(describeValidation(validate.errors ?? [], 'document'));
  return data;
}

const WHY: Record<string, string> = {
  ENOENT: 'there is no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a folder, not a file',
  EMFILE: 'too many files open',
  ERR_STRING_TOO_LONG: 'it is too large to read as one piece of text',
};

/** A file that cannot be read says why, in words (the system's code alone says little). */
export function readFailure(err: unknown, file: string): unknown {
  const e = err as NodeJS.ErrnoException;
  // only the file system's failures are about reading; anything else is the document's
  if (err instanceof DocumentError || typeof e?.code !== 'string') return err;
  const why = WHY[e.code];
  return new DocumentError(`${file}: cannot read the file (${why ? `${why}, ${e.code}` : e.message})`);
}

export async function readDocument(file: string): Promise<ProductionDocument> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw readFailure(err, file);
  }
  return parseDocument(text, file);
}
