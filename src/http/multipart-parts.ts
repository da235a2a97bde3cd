import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import type { Limits } from '../config.js';

export type FormPart =
  | { type: 'field'; name: string; value: string }
  | { type: 'file'; name: string; filename: string; stream: Readable };

/** @fastify/multipart's limit errors, in the catalogue's words (413 naming what was exceeded). */
function translate(err: unknown, limits: Limits): unknown {
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return errors.tooLarge(`files: at most ${limits.submissionFiles} files per request`);
    case 'FST_REQ_FILE_TOO_LARGE':
      return errors.tooLarge(`files: a file is larger than the limit of ${limits.uploadBytes} bytes`);
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return errors.tooLarge('too many form fields in this request');
    case 'FST_PROTO_VIOLATION':
      return errors.invalid('form', 'forbidden field name');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return errors.invalid('form', 'a field declared as JSON is not valid JSON');
    default:
      if (err instanceof Error && /multipart|part terminated/i.test(err.message)) {
        return errors.badRequest('malformed multipart/form-data body');
      }
      return err;
  }
}

/**
 * The parts of a multipart request as a lazy stream: nothing of the body is read until the
 * consumer starts iterating, so refusals that need no body (404, 403) come first. A request
 * that is not multipart yields no parts (the consumer then reports the missing field).
 */
export async function* formParts(request: FastifyRequest, limits: Limits): AsyncGenerator<FormPart> {
  if (!request.isMultipart()) return;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        yield { type: 'file', name: part.fieldname, filename: part.filename ?? '', stream: part.file };
      } else {
        yield { type: 'field', name: part.fieldname, value: String(part.value ?? '') };
      }
    }
  } catch (err) {
    throw translate(err, limits);
  }
}
