import type { Readable } from 'node:stream';
import { Clamp, packageShown } from '../../auth/clamp.js';
import { actorName, writeScopeOf, type Principal } from '../../auth/principal.js';
import type { AppContext } from '../../context.js';
import { laterStamp } from '../../db/updated-at.js';
import { nowIso, parseJson } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { MAX_PAGE, openPage, type Page, type PagedList, type PageQuery } from '../../domain/page.js';
import { AppError, errors } from '../../errors.js';
import { commitStaged, mediaKindOf, type StagedObject } from '../../media/store.js';
import { appendActivity } from '../../db/activity-log.js';
import { insertMedia } from '../../media/rows.js';
import { groupBy } from '../../util/group-by.js';
import { zip } from '../../util/zip.js';
import * as repo from './repository.js';
import type { DeliveryFile, TurnoverOwnSubmission, TurnoverRow, TurnoverSubmission } from './schemas.js';
import { reviewOf, toDeliveryFile } from './submission-list.js';

/** Turnovers and submissions are reached through delivery grants alone. */
const DELIVERY_DOOR = { kinds: ['delivery'], departments: false } as const;

/**
 * The door of the turnover list: the deliveries this key holds a live read or submit grant on,
 * judged now (no query for a production-wide key, which has none; one for an engagement).
 */
export const turnoverDoor = (ctx: AppContext, principal: Principal): Promise<Clamp> =>
  Clamp.load(ctx.db, principal, DELIVERY_DOOR);

const TURNOVERS: PagedList = { name: 'turnovers', key: ['int', 'int'], maxLimit: MAX_PAGE };

type DeliveryRow = Awaited<ReturnType<typeof repo.deliveriesByIds>>[number];

/** What a page of turnovers carries besides its deliveries: their shown packages and this engagement's own work. */
interface RowParts {
  packages: Map<number, DeliveryFile[]>;
  submissions: Map<number, TurnoverOwnSubmission[]>;
}

/**
 * The shown packages of a page's deliveries and the engagement's own submissions on them with
 * their files: three queries whatever the page's size. A package is shown only while its
 * delivery is sent or accepted (the clamp's rule); a retired delivery shows nothing.
 */
async function rowParts(
  ctx: AppContext,
  clamp: Clamp,
  engagementId: number,
  rows: readonly DeliveryRow[],
): Promise<RowParts> {
  const pid = clamp.productionId;
  const live = rows.filter((d) => d.retired_at === null);
  const shown = live.filter((d) => packageShown(d.status)).map((d) => d.id);
  const files = await repo.packageFiles(ctx.db, pid, shown);
  const items = await repo.ownSubmissionsOn(
    ctx.db,
    pid,
    engagementId,
    live.map((d) => d.id),
  );
  const uploaded = await repo.submittedFiles(
    ctx.db,
    pid,
    items.map((w) => w.id),
  );
  // a submission's files are its uploader's: anything another engagement put there is never shown
  const filesOf = groupBy(
    uploaded.filter((m) => m.uploader_engagement_id === engagementId),
    (m) => m.work_item_id,
  );
  const packages = new Map<number, DeliveryFile[]>();
  for (const [id, list] of groupBy(files, (m) => m.delivery_id)) {
    if (id !== null) packages.set(id, list.map(toDeliveryFile));
  }
  const submissions = new Map<number, TurnoverOwnSubmission[]>();
  for (const [id, list] of groupBy(items, (w) => w.delivery_id)) {
    submissions.set(
      id,
      list.map((w) => ({
        id: w.id,
        status: w.status,
        title: w.title,
        created_at: w.created_at,
        media: (filesOf.get(w.id) ?? []).map(toDeliveryFile),
        review: reviewOf(w),
      })),
    );
  }
  return { packages, submissions };
}

/** A row's `updated_at`: the latest of its delivery, its grant, its shown package and the engagement's own work. */
function rowStamp(d: DeliveryRow, grantedAt: string | null | undefined): string {
  const packaged = packageShown(d.status) ? d.package_changed_at : null;
  return [grantedAt, packaged, d.work_changed_at].reduce<string>(
    (at, related) => laterStamp(at, related),
    laterStamp(d.updated_at, null),
  );
}

/**
 * Rule 4: only deliveries the engagement holds a live read or submit grant on, each with its
 * package (once sent) and this engagement's own submissions with their reviews. A row changes
 * when its delivery does, when its grant does (a new grant, read widened to submit), when its
 * shown package does (a file added or taken out) and when the engagement's own work on it does
 * (a submission, a review). Four queries for a page, whatever its size (the deliveries, their
 * packages, the engagement's submissions, their files), besides the clamp's.
 */
export async function listTurnovers(
  ctx: AppContext,
  principal: Principal,
  query: PageQuery = {},
  door?: Clamp,
): Promise<Page<TurnoverRow>> {
  const clamp = door ?? (await turnoverDoor(ctx, principal));
  const { window, close } = openPage(TURNOVERS, principal.productionId, { ...query });
  const granted = clamp.grantedDeliveries();
  const since = window.since;
  const ids = [...granted.keys(), ...(since === undefined ? [] : clamp.retiredDeliveryIds)];
  // a production-wide key holds no delivery grant: its list is empty by contract
  if (ids.length === 0 || clamp.engagementId === null) return { items: [], next: null };
  const engagementId = clamp.engagementId;
  const regranted =
    since === undefined
      ? []
      : [...granted].filter(([, g]) => g.grantedAt !== null && g.grantedAt > since).map(([id]) => id);
  const rows = await repo.deliveriesByIds(
    ctx.db,
    principal.productionId,
    ids,
    window,
    regranted,
    engagementId,
  );
  const page = close(
    rows,
    (d) => [d.position, d.id],
    (d) => d,
  );
  const parts = await rowParts(ctx, clamp, engagementId, page.items);
  return {
    items: page.items.map((d): TurnoverRow => ({
      id: d.id,
      title: d.title,
      status: d.status,
      due: d.due,
      external_to: d.external_to,
      spec: parseJson<Record<string, unknown>[]>(d.spec, []),
      sent_at: d.sent_at,
      can_submit: granted.get(d.id)?.canSubmit ?? false,
      package: parts.packages.get(d.id) ?? [],
      submissions: parts.submissions.get(d.id) ?? [],
      updated_at: rowStamp(d, granted.get(d.id)?.grantedAt),
      ...(d.retired_at ? { retired_at: d.retired_at } : {}),
    })),
    next: page.next,
  };
}

/** Every turnover, unpaged: for callers that need the whole list (MCP resources and prompts). */
export const allTurnovers = async (ctx: AppContext, principal: Principal): Promise<TurnoverRow[]> =>
  (await listTurnovers(ctx, principal)).items;

/** One piece of a submission as it arrives; REST feeds multipart parts, MCP could feed decoded files. */
export type IncomingPart =
  | { type: 'field'; name: string; value: string }
  | { type: 'file'; name: string; filename: string; stream: Readable };

export const TITLE_MAX = 500;
export const NOTE_MAX = 20_000;

interface StagedFile {
  label: string;
  object: StagedObject;
}

function fieldValue(current: string | undefined, name: string, value: string, max: number): string {
  if (current !== undefined) throw errors.invalid(name, 'given more than once');
  if (value.length > max) throw errors.invalid(name, `must be at most ${max} characters`);
  return value;
}

/** The delivery a submission goes to, and the engagement it is made as; refused before any byte is read. */
async function submissionTarget(ctx: AppContext, principal: Principal, deliveryId: number) {
  const clamp = await Clamp.load(ctx.db, principal, DELIVERY_DOOR);
  const notFound = () => errors.notFound('delivery');
  if (!clamp.reachesDelivery(deliveryId)) throw notFound();
  const delivery = await repo.findDelivery(ctx.db, principal.productionId, deliveryId);
  if (!delivery) throw notFound();
  if (clamp.engagementId === null) {
    throw errors.forbidden(
      'a submission needs an engagement-bound key: this production-wide key has no engagement to submit as',
    );
  }
  if (!clamp.canSubmitTo(deliveryId)) {
    throw errors.forbidden('this engagement holds no live submit grant on this delivery');
  }
  return { delivery, engagementId: clamp.engagementId };
}

/** A text part of a submission: its title or note (a file or an unknown field is refused). */
function readField(form: { title?: string; note?: string }, name: string, value: string): void {
  if (name === 'title') {
    form.title = fieldValue(form.title, 'title', value.trim(), TITLE_MAX);
    if (form.title === '')
      throw errors.invalid('title', 'must not be empty (omit it to use the delivery title)');
  } else if (name === 'note') {
    form.note = fieldValue(form.note, 'note', value, NOTE_MAX);
  } else if (name === 'files') {
    throw errors.invalid('files', 'must be a file part (with a filename), not a text field');
  } else {
    throw errors.invalid(name, 'unknown field (expected files, title, note)');
  }
}

/** Streams one file part into the store, appending it to `staged` (so a failure discards it). */
async function stageFile(
  ctx: AppContext,
  pid: number,
  part: Extract<IncomingPart, { type: 'file' }>,
  staged: StagedFile[],
): Promise<void> {
  const { uploadBytes, submissionFiles } = ctx.config.limits;
  if (part.name !== 'files') {
    part.stream.resume();
    throw errors.invalid(part.name, 'unknown file field (files go in "files")');
  }
  if (staged.length >= submissionFiles) {
    part.stream.resume();
    throw errors.tooLarge(`files: at most ${submissionFiles} files per submission`);
  }
  const label = part.filename.trim() || `file ${staged.length + 1}`;
  let object: StagedObject;
  try {
    object = await ctx.store.stage(pid, part.stream, { maxBytes: uploadBytes, filename: part.filename });
  } catch (err) {
    if (err instanceof AppError && err.status === 413) {
      throw errors.tooLarge(`files: "${label}" is larger than the limit of ${uploadBytes} bytes`);
    }
    throw err;
  }
  staged.push({ label, object });
  if (object.size === 0) throw errors.invalid('files', `"${label}" is empty`);
}

/** Reads the submission's parts in order: fields checked, files staged into `staged`. */
async function readSubmission(
  ctx: AppContext,
  pid: number,
  parts: AsyncIterable<IncomingPart>,
  staged: StagedFile[],
): Promise<{ title?: string; note?: string }> {
  const form: { title?: string; note?: string } = {};
  for await (const part of parts) {
    if (part.type === 'field') readField(form, part.name, part.value);
    else await stageFile(ctx, pid, part, staged);
  }
  if (staged.length === 0) throw errors.invalid('files', 'at least one file is required');
  return form;
}

/** The work item, its media rows and the activity entry: one transaction. */
function writeSubmission(
  ctx: AppContext,
  principal: Principal,
  target: Awaited<ReturnType<typeof submissionTarget>>,
  submission: { title: string; note: string; staged: readonly StagedFile[] },
  hooks: WriteHooks<TurnoverSubmission> | undefined,
): Promise<TurnoverSubmission> {
  const { delivery, engagementId } = target;
  const { title, note, staged } = submission;
  const pid = principal.productionId;
  const now = nowIso();
  const actor = actorName(principal);
  return inWriteTransaction(ctx.db, writeScopeOf(principal), hooks, async (trx, changes) => {
    const workItemId = await repo.insertWorkItem(trx, {
      production_id: pid,
      delivery_id: delivery.id,
      engagement_id: engagementId,
      title,
      note,
      status: 'submitted',
      created_by: actor,
      created_at: now,
    });
    const owner = { deliveryId: delivery.id, workItemId, uploaderEngagementId: engagementId };
    const mediaIds = await insertMedia(
      trx,
      staged.map(({ label, object }) => ({
        productionId: pid,
        object,
        label,
        owner,
        createdBy: actor,
        at: now,
      })),
    );
    changes.created('submission', workItemId);
    for (const id of mediaIds) changes.created('media', id);
    await appendActivity(trx, {
      productionId: pid,
      actor,
      verb: 'submitted',
      summary: `${title} on turnover "${delivery.title}" (${staged.length} file${staged.length === 1 ? '' : 's'})`,
      apiKeyId: principal.keyId,
      personId: principal.personId,
      at: now,
    });
    return {
      id: workItemId,
      delivery_id: delivery.id,
      status: 'submitted' as const,
      title,
      note,
      media: zip(staged, mediaIds).map(([{ label, object }, id]) =>
        toDeliveryFile({
          id,
          label,
          kind: mediaKindOf(object.contentType),
          content_type: object.contentType,
          size: object.size,
          sha256: object.sha256,
        }),
      ),
      created_at: now,
    };
  });
}

/**
 * Submits work on a turnover. Refusals in contract order, each before any byte is read:
 * no reach (404, exactly as for an unknown delivery) → no engagement or no live submit grant
 * (403); then, while reading, a bad field or no file (422) and size limits (413). Files stream
 * into the store one at a time and are never held whole in memory. The work item and its
 * media rows are one transaction; staged bytes become permanent only after it commits, and on
 * any failure nothing remains: no work item, no media rows, no stored bytes.
 */
export async function submitTurnover(
  ctx: AppContext,
  principal: Principal,
  deliveryId: number,
  parts: AsyncIterable<IncomingPart>,
  hooks?: WriteHooks<TurnoverSubmission>,
  onRead?: (form: SubmissionRead) => void,
): Promise<TurnoverSubmission> {
  const target = await submissionTarget(ctx, principal, deliveryId);
  const staged: StagedFile[] = [];
  return commitStaged(
    () => staged.map((s) => s.object),
    async () => {
      const { title, note } = await readSubmission(ctx, principal.productionId, parts, staged);
      onRead?.({ title, note, files: staged.map((s) => ({ label: s.label, sha256: s.object.sha256 })) });
      const submission = { title: title ?? target.delivery.title, note: note ?? '', staged };
      return writeSubmission(ctx, principal, target, submission, hooks);
    },
  );
}

/** What a submission carried, for its Idempotency-Key fingerprint (files by content, not bytes). */
export interface SubmissionRead {
  title: string | undefined;
  note: string | undefined;
  files: Array<{ label: string; sha256: string }>;
}
