import { basename } from 'node:path';
import type { Db } from '../../db/index.js';
import { groupBy } from '../../util/group-by.js';
import type { DocSubmission, DocTurnoverFile } from '../schema.js';
import type { Id } from '../sync/cells.js';
import type { ColumnTypes } from '../sync/write.js';
import type { ExportContext } from './export-context.js';
import { iso, type RowContext } from './row-context.js';

/**
 * The turnover both ways: a delivery's package (the files the production sends) and the work
 * engagements submitted on deliveries, with the production's review. The rows each document
 * object becomes, and (for an export) the document objects the stored rows become.
 */

/** The name a file goes by: its label, or the last part of its path. */
export const labelOf = (f: DocTurnoverFile): string => f.label ?? basename(f.media);

/** A package file is known by its delivery and its content (the same bytes twice: `#2`). */
export const packageKey = (delivery: string, sha256: string): string => `${delivery}/${sha256}`;

/**
 * A submission is known by the engagement that sent it, its delivery, when it was sent and its
 * title (submissions have no ref).
 */
export const submissionKey = (s: {
  engagement: string;
  delivery: string;
  created_at: string;
  title: string;
}): string => `${s.engagement}/${s.delivery}@${s.created_at}: ${s.title}`;

/** The review columns: the decision is the status. */
export const REVIEW_COLUMNS = [
  'status',
  'review_note',
  'reviewed_by',
  'reviewed_by_person_id',
  'reviewed_at',
] as const;

export const SUBMISSION_COLUMNS = {
  note: 'text',
  created_by: 'text',
  status: 'text',
  review_note: 'text',
  reviewed_by: 'text',
  reviewed_by_person_id: 'integer',
  reviewed_at: 'text',
} satisfies ColumnTypes<'work_items'>;

/**
 * `review.reviewed_by` names a person of the document (then the row keeps the person and their
 * name) or is free text, as a version's `created_by` does.
 */
export function submissionRow<I extends Id>(
  s: DocSubmission,
  personName: (ref: string) => string | undefined,
  ctx: RowContext<I>,
) {
  const review = s.review ?? null;
  const by = review?.reviewed_by || null;
  const name = by === null ? undefined : personName(by);
  return {
    production_id: ctx.productionId,
    delivery_id: ctx.need(s.delivery),
    engagement_id: ctx.need(s.engagement),
    title: s.title,
    note: s.note ?? '',
    status: review?.decision ?? ('submitted' as const),
    created_by: s.created_by ?? null,
    created_at: iso(s.created_at),
    review_note: review ? (review.note ?? '') : null,
    reviewed_by: name ?? by,
    reviewed_by_person_id: by !== null && name !== undefined ? ctx.need(by) : null,
    reviewed_at: review ? iso(review.reviewed_at) : null,
  };
}

/** The files that make up live deliveries' packages, and every submission with its files. */
export async function readTurnovers(db: Db, pid: number) {
  const [packages, submissions, submitted] = await Promise.all([
    db
      .selectFrom('media')
      .where('production_id', '=', pid)
      .where('delivery_id', 'is not', null)
      .where('work_item_id', 'is', null)
      .where('removed_at', 'is', null)
      .select(['id', 'delivery_id', 'label'])
      .orderBy('id')
      .execute(),
    db.selectFrom('work_items').where('production_id', '=', pid).selectAll().orderBy('id').execute(),
    db
      .selectFrom('media')
      .where('production_id', '=', pid)
      .where('work_item_id', 'is not', null)
      .select(['id', 'work_item_id', 'label'])
      .orderBy('id')
      .execute(),
  ]);
  return { packages, submissions, submitted };
}
export type StoredTurnovers = Awaited<ReturnType<typeof readTurnovers>>;
type StoredSubmission = StoredTurnovers['submissions'][number];

const filesDoc = (
  files: ReadonlyArray<{ id: number; label: string }>,
  ex: ExportContext,
): DocTurnoverFile[] =>
  files.flatMap((f) => {
    const media = ex.fileOf(f.id);
    return media === null ? [] : [{ media, label: f.label }];
  });

/** Each delivery's package as the document lists it (empty packages are left out). */
export function packagesDoc(
  t: StoredTurnovers,
  ex: ExportContext,
): (deliveryId: number) => DocTurnoverFile[] {
  const of = groupBy(t.packages, (m) => m.delivery_id ?? -1);
  return (deliveryId) => filesDoc(of.get(deliveryId) ?? [], ex);
}

/**
 * The submissions as the document lists them, in the order they arrived: those whose delivery
 * and engagement are live (`delivery`, `engagement`: a live object's ref, or undefined).
 */
export function submissionsDoc(
  t: StoredTurnovers,
  delivery: (id: number) => string | undefined,
  engagement: (id: number) => string | undefined,
  ex: ExportContext,
): { submissions?: DocSubmission[] } {
  const filesOf = groupBy(t.submitted, (m) => m.work_item_id ?? -1);
  const docOf = (w: StoredSubmission, refs: { delivery: string; engagement: string }): DocSubmission => {
    const files = filesDoc(filesOf.get(w.id) ?? [], ex);
    const reviewer = w.reviewed_by_person_id === null ? undefined : ex.person.get(w.reviewed_by_person_id);
    const decided = w.status !== 'submitted' && w.reviewed_at !== null;
    return {
      ...refs,
      title: w.title,
      note: w.note,
      created_by: w.created_by,
      created_at: w.created_at,
      ...(files.length ? { files } : {}),
      ...(decided
        ? {
            review: {
              decision: w.status as Exclude<StoredSubmission['status'], 'submitted'>,
              note: w.review_note ?? '',
              reviewed_by: reviewer ?? w.reviewed_by,
              reviewed_at: w.reviewed_at as string,
            },
          }
        : {}),
    };
  };
  const submissions = t.submissions.flatMap((w) => {
    const d = delivery(w.delivery_id);
    const e = w.engagement_id === null ? undefined : engagement(w.engagement_id);
    return d === undefined || e === undefined ? [] : [docOf(w, { delivery: d, engagement: e })];
  });
  return submissions.length ? { submissions } : {};
}
