import { Readable } from 'node:stream';
import { Type, type Static } from 'typebox';
import { NOTE_MAX, TITLE_MAX, type IncomingPart } from '../modules/turnovers/service.js';

/**
 * The multipart form of POST /turnovers/{id}/submissions as JSON arguments: files arrive in
 * base64. The rules (no file 422, too many files or too large 413, title and note lengths) stay
 * in the service, which sees the very parts a multipart upload would give it.
 */
export const SubmissionUpload = Type.Object({
  title: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: TITLE_MAX,
      description: `Defaults to the delivery's title; at most ${TITLE_MAX} characters`,
    }),
  ),
  note: Type.Optional(
    Type.String({ maxLength: NOTE_MAX, description: `Free text; at most ${NOTE_MAX} characters` }),
  ),
  files: Type.Array(
    Type.Object(
      {
        filename: Type.String({ maxLength: 255, description: 'The name the file is recorded under' }),
        content_base64: Type.String({
          // at least one byte: an empty file is refused
          minLength: 2,
          pattern: '^[A-Za-z0-9+/]*={0,2}$',
          description:
            "The file's bytes, base64 (standard alphabet, no line breaks); an empty file is refused",
        }),
      },
      { additionalProperties: false },
    ),
    {
      minItems: 1,
      description:
        'One or more files; each becomes its own media object, typed from its bytes. The per-file size and the file count have the same limits as the REST upload (413 beyond them); the whole request is bounded by PRODGRAPH_MAX_MCP_BODY_BYTES.',
    },
  ),
});
export type SubmissionUpload = Static<typeof SubmissionUpload>;

/** The parts, decoded one file at a time as the service asks for them. */
export async function* uploadParts(upload: SubmissionUpload): AsyncGenerator<IncomingPart> {
  if (upload.title !== undefined) yield { type: 'field', name: 'title', value: upload.title };
  if (upload.note !== undefined) yield { type: 'field', name: 'note', value: upload.note };
  for (const file of upload.files) {
    const bytes = Buffer.from(file.content_base64, 'base64');
    yield { type: 'file', name: 'files', filename: file.filename, stream: Readable.from([bytes]) };
  }
}
