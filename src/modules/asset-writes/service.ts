import type { Readable } from 'node:stream';
import { actorName, writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { onPostgres } from '../../db/driver/kysely-surface.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { errors } from '../../errors.js';
import { commitStaged, mediaKindOf, type StagedObject } from '../../media/store.js';
import { appendActivity } from '../../db/activity-log.js';
import { activityActor, clip, entryFor } from '../activity/write-entry.js';
import { insertMediaObject } from '../../media/rows.js';
import type { LandedVersionRow } from '../versions/repository.js';
import { toLandedVersion } from '../versions/service.js';
import * as repo from './repository.js';
import type { CreatedAsset, CreatedNote, CreatedVersion, NewAsset, NewNote } from './schemas.js';

export const DEFAULT_VARIANT = 'On-Set';

const nonBlank = (field: string, value: string): string => {
  const trimmed = value.trim();
  if (trimmed === '') throw errors.invalid(field, 'must not be blank');
  return trimmed;
};

/** Blank optional text means "not given". */
const optionalText = (value: string | null | undefined): string | null => {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
};

export async function createAsset(
  ctx: AppContext,
  principal: Principal,
  input: NewAsset,
  hooks?: WriteHooks<CreatedAsset>,
): Promise<CreatedAsset> {
  const label = nonBlank('label', input.label);
  const kind = nonBlank('kind', input.kind ?? 'asset');
  if (kind.toLowerCase() === 'scene') {
    throw errors.invalid('kind', 'scenes come from the script and cannot be created through the API');
  }
  const status = input.status ?? 'planned';
  const slug = optionalText(input.department);
  const pid = principal.productionId;

  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    const department = slug === null ? null : await repo.findDepartmentId(trx, pid, slug);
    if (slug !== null && !department) {
      throw errors.invalid('department', `no department "${slug}" in this production`);
    }
    const at = nowIso();
    const position = await repo.nextAssetPosition(trx, pid);
    const { id } = await repo.insertAsset(trx, {
      productionId: pid,
      label,
      kind,
      status,
      departmentId: department?.id ?? null,
      position,
      at,
    });
    changes.created('asset', id);
    const where = department ? ` in ${department.slug}` : '';
    await appendActivity(trx, entryFor(principal, 'created', `${kind} "${label}"${where}`, id, at));
    return {
      node_id: id,
      label,
      kind,
      status,
      department: department?.slug ?? null,
      versions: 0,
      created_at: at,
      updated_at: at,
    };
  });
}

export async function addNote(
  ctx: AppContext,
  principal: Principal,
  nodeId: number,
  input: NewNote,
  hooks?: WriteHooks<CreatedNote>,
): Promise<CreatedNote> {
  const text = nonBlank('text', input.text);
  const givenAuthor = optionalText(input.author);
  const author = givenAuthor ?? actorName(principal);
  const pid = principal.productionId;

  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    const at = nowIso();
    if (onPostgres(trx)) {
      const landed = await repo.touchAssetAndNote(
        trx,
        { productionId: pid, nodeId, versionId: input.version_id ?? null, text, author, at },
        {
          actor: activityActor(principal),
          summaryAfter: `: ${clip(text)}`,
          apiKeyId: principal.keyId,
          personId: principal.personId,
        },
      );
      if (!landed) throw errors.notFound('asset');
      if (landed.id !== null) {
        changes.updated('asset', nodeId);
        changes.created('note', landed.id);
        return {
          id: landed.id,
          node_id: nodeId,
          landed_on: 'version',
          version_id: landed.version_id,
          version: landed.version,
          text,
          author,
          created_at: at,
        };
      }
      // no such version: the asset alone was touched, and the rest goes as on SQLite
    }
    const asset = await repo.touchAsset(trx, pid, nodeId, at);
    if (!asset) throw errors.notFound('asset');
    changes.updated('asset', nodeId);
    const target =
      input.version_id === undefined
        ? await repo.newestVersion(trx, nodeId)
        : await repo.versionOfNode(trx, nodeId, input.version_id);
    if (!target && input.version_id !== undefined) {
      throw errors.invalid('version_id', `is not a version of asset ${nodeId}; nothing was recorded`);
    }
    if (!target) {
      // No version to hold it: the note is the activity entry itself.
      const summary = givenAuthor ? `${givenAuthor}: ${text}` : text;
      const id = await appendActivity(trx, entryFor(principal, 'noted', summary, nodeId, at));
      return {
        id,
        node_id: nodeId,
        landed_on: 'activity',
        version_id: null,
        version: null,
        text,
        author,
        created_at: at,
      };
    }
    const { id } = await repo.insertVersionNote(trx, {
      productionId: pid,
      versionId: target.id,
      text,
      author,
      at,
    });
    changes.created('note', id);
    await appendActivity(
      trx,
      entryFor(principal, 'noted', `"${asset.label}" v${target.version}: ${clip(text)}`, nodeId, at),
    );
    return {
      id,
      node_id: nodeId,
      landed_on: 'version',
      version_id: target.id,
      version: target.version,
      text,
      author,
      created_at: at,
    };
  });
}

/** Refuses an upload to an unknown asset before its bytes are read. */
export async function assertAsset(ctx: AppContext, principal: Principal, nodeId: number): Promise<void> {
  if (!(await repo.findAsset(ctx.db, principal.productionId, nodeId))) throw errors.notFound('asset');
}

/** Streams an upload into the media store's staging area, within the configured size limit. */
export function stageUpload(
  ctx: AppContext,
  principal: Principal,
  source: Readable,
  filename?: string,
): Promise<StagedObject> {
  return ctx.store.stage(principal.productionId, source, {
    maxBytes: ctx.config.limits.uploadBytes,
    filename,
  });
}

export interface VersionUpload {
  /** Staged bytes; landVersion commits them after the transaction, or discards them on any failure (commitStaged). */
  file: StagedObject;
  note?: string | null;
  variant?: string | null;
}

/** A landed version is a still or a clip: the bytes say which, never the name or the header. */
function checkVersionUpload(upload: VersionUpload): { note: string | null; variant: string } {
  const { file } = upload;
  if (file.size === 0) throw errors.invalid('file', 'is empty');
  const kind = mediaKindOf(file.contentType);
  if (kind !== 'image' && kind !== 'video') {
    const found =
      file.contentType === 'application/octet-stream' ? 'not a recognised format' : file.contentType;
    throw errors.unsupportedMedia(`file: is ${found}; a version is an image or a video`);
  }
  const note = optionalText(upload.note);
  const variant = optionalText(upload.variant) ?? DEFAULT_VARIANT;
  if (variant.length > 100) throw errors.invalid('variant', 'must be at most 100 characters');
  if (note !== null && note.length > 10_000) throw errors.invalid('note', 'must be at most 10000 characters');
  return { note, variant };
}

export async function landVersion(
  ctx: AppContext,
  principal: Principal,
  nodeId: number,
  upload: VersionUpload,
  hooks?: WriteHooks<CreatedVersion>,
): Promise<CreatedVersion> {
  const { file } = upload;
  const pid = principal.productionId;
  const createdBy = actorName(principal);
  return commitStaged(
    () => [file],
    async () => {
      const { note, variant } = checkVersionUpload(upload);
      return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
        const at = nowIso();
        // touchAsset locks the node first, so the number read next cannot be taken concurrently
        const asset = await repo.touchAsset(trx, pid, nodeId, at);
        if (!asset) throw errors.notFound('asset');
        const number = await repo.nextVersionNumber(trx, nodeId);
        const mediaId = await insertMediaObject(trx, {
          productionId: pid,
          object: file,
          label: `${asset.label} v${number}`,
          owner: { nodeId },
          createdBy,
          at,
        });
        const { id } = await repo.insertVersion(trx, {
          productionId: pid,
          nodeId,
          version: number,
          variant,
          note,
          mediaId,
          createdBy,
          createdByPersonId: principal.personId,
          at,
        });
        changes.updated('asset', nodeId).created('version', id).created('media', mediaId);
        await appendActivity(
          trx,
          entryFor(principal, 'uploaded', `"${asset.label}" v${number} (${variant}), wip`, nodeId, at),
        );
        const landed: LandedVersionRow = {
          id,
          node_id: nodeId,
          version: number,
          variant,
          status: 'wip',
          released: 0,
          note,
          media_id: mediaId,
          storage_key: file.key,
          created_by: createdBy,
          created_by_person_id: principal.personId,
          created_at: at,
        };
        return toLandedVersion(landed, file);
      });
    },
  );
}
