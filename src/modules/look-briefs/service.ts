import type { Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { errors } from '../../errors.js';
import { briefFor, releasedVersionForBrief, replaceBrief, storeBrief } from './repository.js';
import { analyseStill, METHOD, NotAStill } from './look/analyse.js';
import { summarise } from './look/summary.js';
import type { LookBrief } from './schemas.js';

export const versionNotFound = () => errors.notFound('version');

/** Media types sharp decodes as one frame; anything else is refused before touching the file. */
const STILL_TYPES = new Set([
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/tiff',
  'image/gif',
  'image/avif',
  'image/heic',
  'image/heif',
]);

const parsed = (text: string | null): LookBrief | null => {
  if (text === null) return null;
  try {
    const brief = JSON.parse(text) as LookBrief;
    return brief.method === METHOD ? brief : null;
  } catch {
    return null;
  }
};

/**
 * The look brief of a released still: served from the store while the version's media is the
 * one it was computed from (and by this method), else computed, stored and served.
 */
export async function lookBrief(
  ctx: AppContext,
  principal: Principal,
  versionId: number,
): Promise<LookBrief> {
  const row = await releasedVersionForBrief(ctx.db, principal.productionId, versionId);
  if (!row) throw versionNotFound();
  const stored = parsed(row.brief);
  if (stored) return stored;

  const subject = `version ${row.id}`;
  if (row.media_id === null || row.storage_key === null || row.sha256 === null) {
    throw errors.invalid('version_id', `${subject} has no media to analyse`);
  }
  const contentType = row.content_type ?? 'application/octet-stream';
  if (!STILL_TYPES.has(contentType)) {
    const why = contentType.startsWith('image/')
      ? 'an image format the look brief cannot read'
      : 'not a still image';
    throw errors.invalid('version_id', `the media of ${subject} is ${contentType}, ${why}`);
  }
  const path = ctx.store.resolveKey(row.storage_key);
  if (!path || !(await ctx.store.stat(row.storage_key))) {
    throw errors.invalid('version_id', `the media file of ${subject} is missing from the media store`);
  }
  let look;
  try {
    look = await analyseStill(path, ctx.config.limits.decodeBytes);
  } catch (err) {
    if (err instanceof NotAStill)
      throw errors.invalid('version_id', `the media of ${subject} ${err.message}`);
    throw err;
  }
  const generatedAt = nowIso();
  const brief: LookBrief = {
    version_id: row.id,
    node_id: row.node_id,
    label: row.label,
    version: row.version,
    ...look,
    summary: summarise(look),
    method: METHOD,
    generated_at: generatedAt,
  };
  const text = JSON.stringify(brief);
  if (row.brief_id !== null) {
    await replaceBrief(ctx.db, row.brief_id, text, generatedAt);
    return brief;
  }
  const storedNow = await storeBrief(ctx.db, {
    productionId: principal.productionId,
    versionId: row.id,
    sourceSha256: row.sha256,
    brief: text,
    createdAt: generatedAt,
  });
  if (storedNow) return brief;
  // a concurrent first request stored its brief first: answer with that one, so both agree
  return parsed((await briefFor(ctx.db, row.id, row.sha256))?.brief ?? null) ?? brief;
}
