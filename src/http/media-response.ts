import contentDisposition from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, errors } from '../errors.js';
import type { MediaStore, ServedMedia } from '../media/store.js';

/** The request headers a media answer honours (sendMedia). */
export const MediaRequestHeaders = Type.Object({
  range: Type.Optional(
    Type.String({
      description: 'One byte range, `bytes=a-b`, `bytes=a-` or `bytes=-n`: answers 206 (416 outside)',
    }),
  ),
  'if-range': Type.Optional(
    Type.String({ description: 'The ETag the Range was meant for: a changed file is sent whole instead' }),
  ),
  'if-none-match': Type.Optional(
    Type.String({ description: 'The ETag you hold (or `*`): while it is current the answer is 304' }),
  ),
});

/**
 * The file name offered for a download: the label with anything a file system or a header
 * could trip on (path separators, quotes, controls, dots at the ends) replaced, at most 120
 * characters, with the stored file's extension. Non-ASCII survives in `filename*`.
 */
export function downloadName(label: string, storageKey: string): string {
  const ext = /\.([a-z0-9]{1,8})$/.exec(storageKey)?.[1];
  const base =
    label
      .normalize('NFC')
      .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}"\\/:*?<>|%;]+/gu, '_')
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/^[.\s]+|[.\s]+$/g, '')
      .slice(0, 120) || 'media';
  return ext && !base.toLowerCase().endsWith(`.${ext}`) ? `${base}.${ext}` : base;
}

/**
 * What a browser may show in place rather than save: raster images, video and PDF. Anything
 * else a vendor uploaded (HTML, XHTML, XML, SVG: all can carry script that would run with the
 * API's origin and read the ticket in the URL) is served as a download.
 */
const INLINE_TYPES =
  /^(image\/(jpeg|png|gif|webp|avif|bmp|tiff|heic|heif)|video\/[a-z0-9][a-z0-9.+-]*|application\/pdf)$/;

export const servedInline = (contentType: string): boolean =>
  INLINE_TYPES.test((contentType.split(';')[0] ?? '').trim().toLowerCase());

/**
 * The content security policy of a media answer: nothing loads, and the answer is a sandbox (a
 * unique origin, no script) — but for PDF, whose viewer browsers refuse to run in a sandbox (a
 * PDF's own script runs in the viewer's isolated process, never with the API's origin).
 */
export const MEDIA_CSP = "default-src 'none'; sandbox";
const PDF_CSP = "default-src 'none'; style-src 'unsafe-inline'";

/** Headers every media route answers with, refusals included (a route's onSend hook). */
export async function mediaAnswerHeaders(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', MEDIA_CSP);
}

type Range = { start: number; end: number } | 'unsatisfiable' | null;

/** One `bytes=` range (the form video players send); several ranges are answered whole. */
export function parseRange(header: string | undefined, size: number): Range {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/**
 * Streams a stored file with Content-Type, Content-Length, ETag, Last-Modified and Range
 * (206/416) support; If-None-Match on the strong sha256 tag answers 304. Images, video and PDF
 * are offered inline, anything else as an attachment, always under a content security policy.
 * `beforeAnswer` hears the status chosen before any of the answer is sent (an audit trail's row).
 */
export async function sendMedia(
  request: FastifyRequest,
  reply: FastifyReply,
  store: MediaStore,
  media: ServedMedia,
  notFound = () => errors.notFound('media'),
  beforeAnswer?: (status: 200 | 206 | 304 | 416) => Promise<void>,
): Promise<FastifyReply> {
  const stat = await store.stat(media.storageKey);
  if (!stat) throw notFound();
  const etag = `"${media.sha256}"`;
  reply.header('etag', etag);
  reply.header('last-modified', stat.mtime.toUTCString());
  reply.header('accept-ranges', 'bytes');
  reply.header('cache-control', 'private, max-age=0, must-revalidate');
  reply.header('x-content-type-options', 'nosniff');
  // a ticket rides in the URL: never hand it to another site as a Referer
  reply.header('referrer-policy', 'no-referrer');
  const inline = servedInline(media.contentType);
  reply.header(
    'content-disposition',
    contentDisposition(downloadName(media.label, media.storageKey), {
      type: inline ? 'inline' : 'attachment',
    }),
  );
  const pdf = inline && media.contentType.startsWith('application/pdf');
  reply.header('content-security-policy', pdf ? PDF_CSP : MEDIA_CSP);
  const inm = request.headers['if-none-match'];
  if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')) {
    await beforeAnswer?.(304);
    return reply.code(304).send();
  }
  const ifRange = request.headers['if-range'];
  const range = ifRange && ifRange !== etag ? null : parseRange(request.headers.range, stat.size);
  if (range === 'unsatisfiable') {
    // the answer is a JSON refusal, not the file: it names no file and is shown in no viewer
    reply.removeHeader('content-disposition');
    reply.header('content-security-policy', MEDIA_CSP);
    await beforeAnswer?.(416);
    throw new AppError(416, 'requested range is not satisfiable', {
      'content-range': `bytes */${stat.size}`,
    });
  }
  await beforeAnswer?.(range ? 206 : 200);
  reply.type(media.contentType);
  if (range) {
    reply.code(206);
    reply.header('content-range', `bytes ${range.start}-${range.end}/${stat.size}`);
    reply.header('content-length', range.end - range.start + 1);
    return reply.send(await store.open(media.storageKey, range));
  }
  reply.header('content-length', stat.size);
  return reply.send(await store.open(media.storageKey));
}
