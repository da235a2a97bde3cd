import { Readable } from 'node:stream';
import { actorName, writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { errors } from '../../errors.js';
import { storedMediaPath } from '../../media/paths.js';
import { commitStaged } from '../../media/store.js';
import { decodes, overBudget } from '../../media/decode.js';
import { loadSharp } from '../../media/sharp.js';
import { MAX_INPUT_PIXELS } from '../look-briefs/look/analyse.js';
import { normaliseLibraryPath } from '../storage-library/paths.js';
import { assertActiveFilespace } from '../storage-library/service.js';
import { deleteMedia, insertMediaObject } from '../../media/rows.js';
import { liveFileByPath, setProxy } from './repository.js';
import { lockLibrary } from '../storage-library/repository.js';
import type { MediaProxyResult } from './schemas.js';

/** Largest JPEG accepted: 8 MiB (a stand-in image, never a full-resolution frame). */
export const MAX_PROXY_BYTES = 8 * 1024 * 1024;
/** Long edge of the stored stand-in image. */
export const PROXY_EDGE = 2048;

export interface ProxyUpload {
  filespace: string;
  path: string;
  bytes: Buffer;
}

export const isJpeg = (b: Buffer): boolean =>
  b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;

/**
 * Decoded and re-encoded, so whatever the agent sent, what we serve is a bounded, metadata-free
 * JPEG. The header is read first: a JPEG whose decode would take more memory than a decode may
 * (a large progressive one) is refused before any pixel is decoded (413), and decodes take
 * their turn (DecodeGate).
 */
async function boundedJpeg(bytes: Buffer, maxDecodeBytes: number): Promise<Buffer> {
  const sharp = await loadSharp();
  const input = () =>
    sharp(bytes, { failOn: 'error', sequentialRead: true, limitInputPixels: MAX_INPUT_PIXELS });
  let meta;
  try {
    meta = await input().metadata();
  } catch {
    throw errors.unsupportedMedia('bytes: could not be decoded as a JPEG');
  }
  if (meta.format !== 'jpeg') throw errors.unsupportedMedia(`bytes: not a JPEG (${meta.format})`);
  const over = overBudget(meta, maxDecodeBytes);
  if (over) throw errors.tooLarge(`bytes: the JPEG ${over}`);
  return decodes.run(async () => {
    try {
      return await input()
        .rotate() // bake the EXIF orientation in before the metadata goes
        .resize({ width: PROXY_EDGE, height: PROXY_EDGE, fit: 'inside', withoutEnlargement: true })
        .jpeg({ quality: 85, mozjpeg: true })
        .toBuffer();
    } catch {
      throw errors.unsupportedMedia('bytes: could not be decoded as a JPEG');
    }
  });
}

/**
 * Replaces the stand-in image of one library file. The library row itself (path, size) does
 * not change; the previous proxy's stored file is removed once the new one is committed.
 */
export async function storeProxy(
  ctx: AppContext,
  principal: Principal,
  upload: ProxyUpload,
  hooks?: WriteHooks<MediaProxyResult>,
): Promise<MediaProxyResult> {
  const pid = principal.productionId;
  await assertActiveFilespace(ctx.db, pid, upload.filespace);
  const normal = normaliseLibraryPath(upload.path);
  if ('reason' in normal) throw errors.invalid('path', normal.reason.replace(/^path /, ''));
  if (upload.bytes.length > MAX_PROXY_BYTES)
    throw errors.tooLarge(`bytes: the JPEG is larger than ${MAX_PROXY_BYTES} bytes`);
  if (!isJpeg(upload.bytes)) throw errors.unsupportedMedia('bytes: must be a JPEG image');
  if (!(await liveFileByPath(ctx.db, pid, normal.path))) throw errors.notFound('library file');

  const jpeg = await boundedJpeg(upload.bytes, ctx.config.limits.decodeBytes);
  const staged = await ctx.store.stage(pid, Readable.from([jpeg]), { filename: 'proxy.jpg' });
  let previousKey: string | null = null;
  const result = await commitStaged(
    () => [staged],
    () =>
      inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
        await lockLibrary(trx, ctx.dialect, pid);
        const file = await liveFileByPath(trx, pid, normal.path);
        if (!file) throw errors.notFound('library file');
        // the proxy belongs to the library row alone: a newer one replaces it
        const mediaId = await insertMediaObject(trx, {
          productionId: pid,
          object: staged,
          label: `Proxy of ${normal.path}`,
          owner: null,
          createdBy: actorName(principal),
          at: nowIso(),
        });
        await setProxy(trx, file.id, mediaId);
        changes.created('media', mediaId);
        if (file.proxy_media_id !== null) {
          await deleteMedia(trx, pid, [file.proxy_media_id]);
          changes.retired('media', file.proxy_media_id);
        }
        previousKey = file.proxy_key ?? null;
        return { ok: true as const, media_path: storedMediaPath(staged.key), bytes: staged.size };
      }),
  );
  // the old bytes are unreferenced now; failing to remove them only leaves an orphan file
  if (previousKey) await ctx.store.delete(previousKey).catch(() => undefined);
  return result;
}
