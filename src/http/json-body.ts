import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, errors } from '../errors.js';

/**
 * How deeply a JSON request body may nest arrays and objects. Every body the API takes is a
 * handful of levels deep (an MCP tool call with files: six); a body nested thousands deep is
 * an attack: parsing a large body of `[[[[…` builds millions of arrays, holds the event loop
 * and takes many times the body's size in memory before any schema can refuse it.
 */
export const MAX_JSON_DEPTH = 64;

/** The characters that open or close a level, or a string. */
const STRUCTURE = /["[\]{}]/g;

/**
 * The first depth over `max` a JSON text reaches, or 0 when it stays within it. One pass, no
 * allocation: the regular expression and `indexOf` skip what cannot change the depth (a long
 * string is crossed in one jump); brackets inside strings, escaped quotes included, do not
 * count. The text need not be valid JSON: the parser that follows judges that.
 */
export function depthOver(text: string, max = MAX_JSON_DEPTH): number {
  let depth = 0;
  STRUCTURE.lastIndex = 0;
  for (let m = STRUCTURE.exec(text); m !== null; m = STRUCTURE.exec(text)) {
    const c = m[0];
    if (c === '"') {
      STRUCTURE.lastIndex = stringEnd(text, m.index + 1);
    } else if (c === '[' || c === '{') {
      if (++depth > max) return depth;
    } else {
      depth--;
    }
  }
  return 0;
}

/** Just past the quote that closes a string whose first character is at `from` (or the end). */
function stringEnd(text: string, from: number): number {
  for (let q = text.indexOf('"', from); q >= 0; q = text.indexOf('"', q + 1)) {
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
  return text.length;
}

export const tooDeep = () =>
  new AppError(
    400,
    `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels; nothing was read`,
    {},
    'malformed_request',
  );

type Done = (err: Error | null, body?: unknown) => void;
export type JsonParser = (request: FastifyRequest, body: string, done: Done) => void;

/**
 * The app's JSON body parser: Fastify's own (which refuses `__proto__` and
 * `constructor.prototype` keys), behind the depth scan above. Every route that parses JSON
 * uses it, including those that add their own handling around it (MCP, installOptionalJsonParser).
 */
export function jsonParser(app: FastifyInstance): JsonParser {
  const parse = app.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    if (depthOver(body) > 0) return done(tooDeep());
    void parse(request, body, done);
  };
}

/**
 * For routes whose body is optional (or that take none): `Content-Type: application/json` with
 * nothing after it is "no body", as browsers and curl send it, not a malformed document; a literal
 * `null` is a body, and not an object. Replaces the parser of `app` and the plugins under it.
 */
export function installOptionalJsonParser(app: FastifyInstance): void {
  const json = jsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    json(request, text, (err, value) => {
      if (!err && value === null) return done(errors.invalid('body', 'must be an object'), undefined);
      done(err, value);
    });
  });
}

/** Replaces the default `application/json` parser of `app` (and the plugins under it). */
export function installJsonParser(app: FastifyInstance): void {
  const parser = jsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    parser(request, body as string, done),
  );
}
