import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import compress from '@fastify/compress';
import negotiate from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Compressed answers. A JSON answer of at least COMPRESS_THRESHOLD bytes is sent gzip- or
 * brotli-encoded when the client's Accept-Encoding asks for it. Cached answers (AnswerCache)
 * are compressed once per encoding and kept beside their bytes; every other JSON answer is
 * compressed as it is sent, by @fastify/compress. Nothing but JSON is ever compressed: media
 * bytes (already compressed images and video, byte ranges, exact Content-Length), the console's
 * files and the MCP endpoint's event streams go out as they are.
 */

export const COMPRESS_THRESHOLD = 1024;

/** What the server encodes, in its order of preference when the client likes both equally. */
export const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** application/json and any +json type, with or without parameters. */
const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json(?:;|$)/;

/** Whether answers of this Content-Type are compressed (on a route that compresses at all). */
export const compressible = (contentType: string): boolean => JSON_TYPE.test(contentType);

/** The encoding to send for this Accept-Encoding header, or null for the bytes as they are. */
export function chooseEncoding(acceptEncoding: string | string[] | undefined): Encoding | null {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding;
  if (!header) return null;
  return negotiate<Encoding>(header, [...ENCODINGS]);
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * One answer's bytes, encoded on the thread pool (the event loop goes on serving meanwhile).
 * Brotli at quality 5: a large list in a fraction of a second, to a small part of its size;
 * quality 11 would take far longer for little more off.
 */
export async function encode(bytes: Buffer, encoding: Encoding): Promise<Buffer> {
  const out =
    encoding === 'gzip'
      ? await gzipAsync(bytes)
      : await brotliAsync(bytes, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 5,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
          },
        });
  return ownBytes(out);
}

/**
 * The same bytes in a buffer of their own. Node cuts small buffers out of shared 8 kB slabs, and
 * one retained slice holds its whole slab: a cached answer must hold only what it counts.
 */
export function ownBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}

/** The UTF-8 bytes of a serialised answer, in a buffer of their own (see ownBytes). */
export function ownUtf8(text: string): Buffer {
  const own = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  own.write(text);
  return own;
}

/**
 * Every JSON answer at least COMPRESS_THRESHOLD long, compressed as it is sent when the client
 * asks. A cached answer arrives already encoded (its Content-Encoding set) and passes untouched.
 * Request bodies are not decompressed: a client sends JSON as it is.
 */
async function compressionPlugin(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: COMPRESS_THRESHOLD,
    encodings: [...ENCODINGS],
    customTypes: JSON_TYPE,
  });
}

export const compression = fp(compressionPlugin, { name: 'prodgraph-compression' });
