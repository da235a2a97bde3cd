import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { textProblem } from '../domain/text.js';
import { errors, isAppError } from '../errors.js';
import type { Limits } from '../config.js';
import type { UploadRule } from './request-body.js';

export type FormPart =
  | { type: 'field'; name: string; value: string }
  | { type: 'file'; name: string; filename: string; stream: Readable };

/** What one form may hold; the messages name `fileField`. */
export interface FormLimits {
  fileBytes: number;
  files: number;
  fileField: string;
  fields?: number;
  fieldBytes?: number;
}

/** The upload routes' limits, from the configuration. */
export const uploadLimits = (limits: Limits, fileField = 'files'): FormLimits => ({
  fileBytes: limits.uploadBytes,
  files: limits.submissionFiles,
  fileField,
});

/**
 * Room beside a form's files for its fields and its framing (each part's boundary and headers):
 * the upload forms' fields are a few short texts (a note of at most 20,000 characters).
 */
export const FORM_ROOM_BYTES = 1024 * 1024;

/**
 * The `config.upload` of a route that takes this form: its whole body may carry every file at
 * its largest plus the room above, and no more (requestBody refuses the rest).
 */
export const formUpload = (limits: FormLimits): UploadRule => ({
  maxBytes: limits.files * limits.fileBytes + FORM_ROOM_BYTES,
});

/** busboy's own words for a body that is not the multipart framing it announced (cut short, no boundary). */
export const isBrokenForm = (err: unknown): boolean =>
  err instanceof Error &&
  /^Multipart: Boundary not found$|unexpected end of multipart data$/i.test(err.message);

const fileTooLarge = (limits: FormLimits) =>
  errors.tooLarge(`${limits.fileField}: a file is larger than the limit of ${limits.fileBytes} bytes`);

/**
 * A file part that passes the size limit fails at once: busboy would only cut it short and
 * read the rest of the part to its end, so its reader (the store staging it) learned of the
 * limit only after the whole file had been read.
 */
function failAtLimit(file: Readable, limits: FormLimits): Readable {
  file.once('limit', () => file.destroy(fileTooLarge(limits)));
  return file;
}

/** @fastify/multipart's limit errors, in the catalogue's words (413 naming what was exceeded). */
function translate(err: unknown, limits: FormLimits): unknown {
  // already in the catalogue's words (the body's limit, requestBody)
  if (isAppError(err)) return err;
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return errors.tooLarge(
        `${limits.fileField}: at most ${limits.files} ${limits.files === 1 ? 'file' : 'files'} per request`,
      );
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge(limits);
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return errors.tooLarge('too many form fields in this request');
    case 'FST_PROTO_VIOLATION':
      return errors.invalid('form', 'forbidden field name');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return errors.invalid('form', 'a field declared as JSON is not valid JSON');
    default:
      if (
        err instanceof Error &&
        /multipart|boundary|part terminated|unexpected end of form/i.test(err.message)
      ) {
        return errors.badRequest('malformed multipart/form-data body');
      }
      return err;
  }
}

/** Names, values and filenames obey the text rule (textProblem) before anything sees them. */
function checkText(part: FormPart): void {
  const name = textProblem(part.name, 'line');
  if (name !== null) throw errors.invalid('form', `a field name ${name}`);
  if (part.type === 'field') {
    const value = textProblem(part.value, 'free');
    if (value !== null) throw errors.invalid(part.name, value);
  } else {
    const filename = textProblem(part.filename, 'line');
    if (filename !== null) throw errors.invalid(part.name, `the filename ${filename}`);
  }
}

/**
 * The parts of a multipart request as a lazy stream: nothing of the body is read until the
 * consumer starts iterating, so refusals that need no body (404, 403) come first. A request
 * that is not multipart yields no parts (the consumer then reports the missing field).
 */
export async function* formParts(request: FastifyRequest, limits: FormLimits): AsyncGenerator<FormPart> {
  if (!request.isMultipart()) return;
  try {
    const parts = request.parts({
      limits: {
        fileSize: limits.fileBytes,
        files: limits.files,
        ...(limits.fields !== undefined ? { fields: limits.fields } : {}),
        ...(limits.fieldBytes !== undefined ? { fieldSize: limits.fieldBytes } : {}),
      },
    });
    for await (const raw of parts) {
      const part: FormPart =
        raw.type === 'file'
          ? {
              type: 'file',
              name: raw.fieldname,
              filename: raw.filename ?? '',
              stream: failAtLimit(raw.file, limits),
            }
          : { type: 'field', name: raw.fieldname, value: String(raw.value ?? '') };
      try {
        checkText(part);
      } catch (err) {
        if (part.type === 'file') part.stream.resume();
        throw err;
      }
      yield part;
    }
  } catch (err) {
    throw translate(err, limits);
  }
}
