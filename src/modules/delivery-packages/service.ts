// No repository of its own: a package's files are media rows (the media module's and turnovers' queries), its delivery found by delivery-status's.
import type { Readable } from 'node:stream';
import { writeScopeOf, keyActor, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { textProblem } from '../../domain/text.js';
import { AppError, errors } from '../../errors.js';
import { commitStaged, mediaKindOf, type StagedObject } from '../../media/store.js';
import { appendActivity } from '../../db/activity-log.js';
import { actorOf } from '../../auth/audit-actor.js';
import { recordAudit } from '../../auth/audit-record.js';
import { clip } from '../activity/write-entry.js';
import { findPackageFile, removeFromPackage } from '../media/repository.js';
import { insertMedia } from '../../media/rows.js';
import { packageFiles } from '../turnovers/repository.js';
import { toDeliveryFile } from '../turnovers/submission-list.js';
import { zip } from '../../util/zip.js';
import { liveDelivery } from '../delivery-status/repository.js';
import { LABEL_MAX, type DeliveryPackage, type PackageUpload } from './schemas.js';

/**
 * One part of an uploaded package form, as the package reads it: a field, or a file whose bytes
 * stream. Declared here, not taken from the HTTP layer's form reader (whose parts have this shape),
 * so the package depends on no transport.
 */
export type PackagePart =
  | { type: 'field'; name: string; value: string }
  | { type: 'file'; name: string; filename: string; stream: Readable };

/*
 * A delivery's package: the files the production sends with it (plates, EDL, LUT, reference).
 * Each file is its own media object with the delivery's id and no work item; taking one out
 * marks it (`removed_at`) and keeps the row for history.
 */

interface StagedFile {
  label: string;
  object: StagedObject;
}

/** What an upload carried, for its Idempotency-Key fingerprint (files by content, not bytes). */
export interface PackageRead {
  files: Array<{ label: string; sha256: string }>;
}

const notFound = () => errors.notFound('delivery');

/** A label names one file of the package: a file name, never a path. */
function checkedLabel(value: string): string {
  const label = value.trim();
  if (label === '') throw errors.invalid('label', 'must not be blank (omit it to use the file name)');
  if (label.length > LABEL_MAX) throw errors.invalid('label', `must be at most ${LABEL_MAX} characters`);
  const problem = textProblem(label, 'line');
  if (problem !== null) throw errors.invalid('label', problem);
  if (/[/\\]/.test(label) || label === '.' || label === '..')
    throw errors.invalid('label', `"${label}" must be a file name, not a path`);
  return label;
}

/** The reading state: files staged so far, and a label waiting for its file. */
interface Reading {
  staged: StagedFile[];
  label: string | undefined;
}

function readField(reading: Reading, part: Extract<PackagePart, { type: 'field' }>): void {
  if (part.name === 'files')
    throw errors.invalid('files', 'must be a file part (with a filename), not a text field');
  if (part.name !== 'label') throw errors.invalid(part.name, 'unknown field (expected label, files)');
  if (reading.label !== undefined)
    throw errors.invalid('label', `"${reading.label}" is followed by another label, not by its file`);
  reading.label = checkedLabel(part.value);
}

/** Streams one file part into the store (bounded memory), refused past the size limit. */
async function stageFile(
  ctx: AppContext,
  pid: number,
  part: Extract<PackagePart, { type: 'file' }>,
  reading: Reading,
): Promise<void> {
  const { uploadBytes, submissionFiles } = ctx.config.limits;
  if (part.name !== 'files') {
    part.stream.resume();
    throw errors.invalid(part.name, 'unknown file field (files go in "files")');
  }
  if (reading.staged.length >= submissionFiles) {
    part.stream.resume();
    throw errors.tooLarge(`files: at most ${submissionFiles} files per request`);
  }
  const label =
    reading.label ??
    (part.filename.trim() ? checkedLabel(part.filename) : `file ${reading.staged.length + 1}`);
  reading.label = undefined;
  let object: StagedObject;
  try {
    object = await ctx.store.stage(pid, part.stream, { maxBytes: uploadBytes, filename: part.filename });
  } catch (err) {
    if (err instanceof AppError && err.status === 413)
      throw errors.tooLarge(`files: "${label}" is larger than the limit of ${uploadBytes} bytes`);
    throw err;
  }
  reading.staged.push({ label, object });
  if (object.size === 0) throw errors.invalid('files', `"${label}" is empty`);
}

async function readPackage(
  ctx: AppContext,
  pid: number,
  parts: AsyncIterable<PackagePart>,
  reading: Reading,
): Promise<void> {
  for await (const part of parts) {
    if (part.type === 'field') readField(reading, part);
    else await stageFile(ctx, pid, part, reading);
  }
  if (reading.label !== undefined)
    throw errors.invalid('label', `"${reading.label}" is not followed by a file part`);
  if (reading.staged.length === 0) throw errors.invalid('files', 'at least one file is required');
}

/** A label must name one file of the package: refused when the package or this request has it. */
function checkUnique(staged: readonly StagedFile[], current: ReadonlyArray<{ id: number; label: string }>) {
  const seen = new Set<string>();
  for (const { label } of staged) {
    const held = current.find((m) => m.label === label);
    if (held)
      throw errors.conflict(
        `label: "${label}" is already in the package (file ${held.id}); take that one out first to replace it`,
      );
    if (seen.has(label)) throw errors.invalid('label', `"${label}" is given to two files of this request`);
    seen.add(label);
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function writePackage(
  ctx: AppContext,
  principal: Principal,
  delivery: { id: number; title: string },
  staged: readonly StagedFile[],
  hooks: WriteHooks<PackageUpload> | undefined,
): Promise<PackageUpload> {
  const pid = principal.productionId;
  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    // the delivery may have been retired while the bytes arrived
    if (!(await liveDelivery(trx, pid, delivery.id))) throw notFound();
    checkUnique(staged, await packageFiles(trx, pid, [delivery.id]));
    const at = nowIso();
    const actor = keyActor(principal);
    const ids = await insertMedia(
      trx,
      staged.map(({ label, object }) => ({
        productionId: pid,
        object,
        label,
        owner: { packageOf: delivery.id },
        createdBy: actor,
        at,
      })),
    );
    for (const id of ids) changes.created('media', id);
    changes.updated('delivery', delivery.id);
    for (const [{ label }, id] of zip(staged, ids))
      await recordAudit(trx, {
        productionId: pid,
        actor: actorOf(principal),
        action: 'package.file_add',
        object: { type: 'media', id },
        summary: `"${label}" to the package of "${delivery.title}" (delivery ${delivery.id})`,
      });
    const names = clip(staged.map((s) => s.label).join(', '));
    await appendActivity(trx, {
      productionId: pid,
      actor,
      verb: 'added files',
      summary: `${plural(staged.length, 'file')} to the package of "${delivery.title}": ${names}`,
      apiKeyId: principal.keyId,
      personId: principal.personId,
      at,
    });
    return {
      delivery_id: delivery.id,
      files: zip(staged, ids).map(([{ label, object }, id]) => ({
        id,
        label,
        kind: mediaKindOf(object.contentType),
        content_type: object.contentType,
        size: object.size,
        sha256: object.sha256,
      })),
    };
  });
}

/**
 * Adds files to a delivery's package. 404 before any byte is read; then each file streams into
 * the store (never held whole), refused past the upload limit; the media rows, the change rows
 * and the activity entry are one transaction, and the bytes become permanent only once it has
 * committed: on any refusal or failure nothing remains.
 */
export async function addPackageFiles(
  ctx: AppContext,
  principal: Principal,
  deliveryId: number,
  parts: AsyncIterable<PackagePart>,
  hooks?: WriteHooks<PackageUpload>,
  onRead?: (read: PackageRead) => void,
): Promise<PackageUpload> {
  const delivery = await liveDelivery(ctx.db, principal.productionId, deliveryId);
  if (!delivery) throw notFound();
  const reading: Reading = { staged: [], label: undefined };
  return commitStaged(
    () => reading.staged.map((s) => s.object),
    async () => {
      await readPackage(ctx, principal.productionId, parts, reading);
      onRead?.({ files: reading.staged.map((s) => ({ label: s.label, sha256: s.object.sha256 })) });
      return writePackage(ctx, principal, delivery, reading.staged, hooks);
    },
  );
}

/**
 * Takes a file out of the package: vendors no longer see it; the media object stays (a
 * production-wide key still fetches it by id). Taking out a file already out answers the
 * package unchanged and records nothing. 404 for an unknown delivery, or a media id that is
 * not a file of this delivery's package (a submission's file included).
 */
export async function removePackageFile(
  ctx: AppContext,
  principal: Principal,
  deliveryId: number,
  mediaId: number,
  hooks?: WriteHooks<DeliveryPackage>,
): Promise<DeliveryPackage> {
  const pid = principal.productionId;
  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    const delivery = await liveDelivery(trx, pid, deliveryId);
    if (!delivery) throw notFound();
    const file = await findPackageFile(trx, pid, deliveryId, mediaId);
    if (!file) throw errors.notFound('media');
    const at = nowIso();
    const removed = await removeFromPackage(trx, pid, deliveryId, mediaId, at);
    await recordAudit(trx, {
      productionId: pid,
      actor: actorOf(principal),
      action: 'package.file_remove',
      object: { type: 'media', id: mediaId },
      summary: `"${file.label}" from the package of "${delivery.title}" (delivery ${deliveryId})${removed ? '' : ', already out'}`,
    });
    if (removed) {
      changes.updated('media', mediaId);
      changes.updated('delivery', deliveryId);
      await appendActivity(trx, {
        productionId: pid,
        actor: keyActor(principal),
        verb: 'removed a file',
        summary: `"${file.label}" from the package of "${delivery.title}"`,
        apiKeyId: principal.keyId,
        personId: principal.personId,
        at,
      });
    }
    const files = await packageFiles(trx, pid, [deliveryId]);
    return { delivery_id: deliveryId, files: files.map(toDeliveryFile) };
  });
}
