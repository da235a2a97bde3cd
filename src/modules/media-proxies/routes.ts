import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createHash } from 'node:crypto';
import { principalOf } from '../../auth/route-hook.js';
import { requestHashOf, respondToWrite } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import { errors } from '../../errors.js';
import { formParts } from '../../http/multipart-parts.js';
import { buffer } from 'node:stream/consumers';
import { MAX_PROXY_BYTES, storeProxy, type ProxyUpload } from './service.js';
import { MediaProxyForm, MediaProxyJson, MediaProxyResult } from './schemas.js';
import { routesOf } from '../../http/define-route.js';

/** 8 MiB of JPEG as base64 (11,184,812 characters) plus room for the rest of the JSON. */
const JSON_BODY_LIMIT = Math.ceil(MAX_PROXY_BYTES / 3) * 4 + 64 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(text: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) throw errors.invalid('bytes', 'must be base64');
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  // refuse on the announced size, before decoding anything
  if ((compact.length / 4) * 3 - padding > MAX_PROXY_BYTES)
    throw errors.tooLarge(`bytes: the JPEG is larger than ${MAX_PROXY_BYTES} bytes`);
  return Buffer.from(compact, 'base64');
}

const FORM_LIMITS = {
  fileBytes: MAX_PROXY_BYTES,
  files: 1,
  fileField: 'file',
  fields: 10,
  fieldBytes: 16 * 1024,
};

/** Multipart form: the file is read up to the limit and no further (busboy stops at fileSize). */
async function readMultipart(request: FastifyRequest): Promise<ProxyUpload> {
  const fields: Record<string, string> = {};
  let bytes: Buffer | null = null;
  for await (const part of formParts(request, FORM_LIMITS)) {
    if (part.type === 'file') {
      if (part.name !== 'file') {
        part.stream.resume();
        throw errors.invalid(part.name, 'unexpected file; send the JPEG as "file"');
      }
      bytes = await buffer(part.stream);
    } else {
      if (!['filespace', 'path'].includes(part.name))
        throw errors.invalid(part.name, 'unknown field (fields: filespace, path, file)');
      if (part.name in fields) throw errors.invalid(part.name, 'given more than once');
      fields[part.name] = part.value;
    }
  }
  const { filespace, path } = fields;
  if (filespace === undefined) throw errors.invalid('filespace', 'is required');
  if (path === undefined) throw errors.invalid('path', 'is required');
  if (bytes === null) throw errors.invalid('file', 'is required');
  return { filespace, path, bytes };
}

export async function mediaProxyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).post(
    '/storage/media-proxy',
    {
      // the JSON form (the image in base64) is the larger of the two
      config: {
        auth: { scopes: ['write'], surface: 'production' },
        idempotent: true,
        upload: { maxBytes: JSON_BODY_LIMIT },
      },
      schema: {
        operationId: 'uploadMediaProxy',
        summary: "Replace a library file's stand-in image with a bounded JPEG",
        description: [
          'Send either JSON `{filespace, path, bytes}` (bytes base64) or `multipart/form-data` with the fields `filespace`, `path` and the file part `file`.',
          'The bytes must be a JPEG (checked on the bytes, 415 otherwise) of at most 8 MiB (8,388,608 bytes; 413 otherwise, refused while reading, and a JSON body over about 11.2 MB is refused before it is read whole).',
          'The image is decoded and re-encoded to a JPEG whose long edge is at most 2048 px, with its metadata stripped (EXIF orientation applied first), and replaces the previous stand-in image of that file, whose stored bytes are removed. The library row itself does not change.',
          'Decoding is bounded: a JPEG whose decode would take more memory than one decode may (PRODGRAPH_MAX_DECODE_MB, 128 by default) is refused with 413 before any pixel is decoded. A baseline (sequential) JPEG is shrunk while it decodes and fits whatever its size; a progressive one keeps 2 bytes per pixel and component for the whole image (about 3 bytes a pixel with 4:2:0 chroma, so ~44 megapixels fit in 128 MB). Two images are decoded at once per server process; up to 16 requests wait their turn, more are refused with 503 and `Retry-After`.',
          '`path` must name a live library row (404 otherwise); `filespace` must be the production’s active install (403 otherwise). `media_path` is served by the off-plane file route `/media/{path}?t=<ticket>` (ticket from GET /media-ticket); `bytes` is the size of the stored JPEG.',
        ].join('\n\n'),
        tags: ['storage'],
        consumes: ['application/json', 'multipart/form-data'],
        // a multipart body is not parsed before the handler, which reads its parts as they
        // stream: its schema is the document's, checked where it is read
        body: {
          content: {
            'application/json': { schema: MediaProxyJson },
            'multipart/form-data': { schema: MediaProxyForm },
          },
        },
        response: { 200: MediaProxyResult, ...errorResponses(400, 404, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const upload: ProxyUpload = request.isMultipart()
        ? await readMultipart(request)
        : (() => {
            const body = request.body as MediaProxyJson;
            return { filespace: body.filespace, path: body.path, bytes: decodeBase64(body.bytes) };
          })();
      // JSON or multipart, the same image to the same path is the same request
      const hash = requestHashOf(request, {
        filespace: upload.filespace,
        path: upload.path,
        sha256: createHash('sha256').update(upload.bytes).digest('hex'),
      });
      return respondToWrite(
        request,
        reply,
        { status: 200 },
        (hooks) => storeProxy(app.ctx, principalOf(request), upload, hooks),
        hash,
      );
    },
  );
}
