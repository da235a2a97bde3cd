import type { ChangeLog } from '../../db/change-log.js';
import { insertMedia, type NewMedia } from '../../media/rows.js';
import { zip } from '../../util/zip.js';
import { idOf } from '../sync/cells.js';
import { withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { diffKeyed, type KeyedDiff } from '../sync/keyed.js';
import { iso } from '../tables/row-context.js';
import {
  labelOf,
  REVIEW_COLUMNS,
  SUBMISSION_COLUMNS,
  submissionKey,
  submissionRow,
} from '../tables/turnovers.js';
import type { TurnoverFiles } from './turnover-files.js';

/*
 * Work engagements submitted on deliveries, with the production's review. A submission is
 * known by its engagement, delivery, time sent and title (it has no ref).
 * - A submission the production lacks is created with its files.
 * - What a vendor sent stands: a sync never changes a stored submission's note, author or
 *   files, and never deletes a submission the document leaves out (it is the record of what
 *   came back on a turnover; one sent through the API since the document was written stays).
 * - A review is written on a submission that has none; once reviewed (through the API or a
 *   document), the review stands. The plan says "kept" for what stands.
 */

/** What the vendor sent: never changed by a sync. */
const SENT_FIELDS = ['note', 'created_by', 'files'];

export class SubmissionsSection {
  submissions!: KeyedDiff<'work_items'>;
  /** Each wanted submission's files (path and label), by its key. */
  private readonly wantedFiles = new Map<string, Array<{ rel: string; label: string }>>();
  private readonly createdIds: Array<['submission' | 'media', number]> = [];

  constructor(private readonly files: TurnoverFiles) {}

  /** After the engagements and deliveries have their ids (stored, or pending). */
  async diff(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const stored = pid === null ? [] : await readStored(ctx, pid);
    const storedFiles = pid === null ? new Map<number, string[]>() : await readStoredFiles(ctx, pid);
    const names = new Map((ctx.doc.people ?? []).map((x) => [x.ref, x.name]));
    const docSubmissions = ctx.doc.submissions ?? [];
    if (docSubmissions.length) ctx.countsOf('submissions');
    const wanted = withOccurrenceKeys(docSubmissions, (s) =>
      submissionKey({ ...s, created_at: iso(s.created_at) }),
    ).map(([s, key]) => {
      this.wantedFiles.set(
        key,
        (s.files ?? []).map((f) => ({ rel: f.media, label: labelOf(f) })),
      );
      return { key, ref: null, row: submissionRow(s, (ref) => names.get(ref), ctx) };
    });
    this.submissions = diffKeyed<'work_items'>(ctx, {
      kind: 'submissions',
      table: 'work_items',
      columns: SUBMISSION_COLUMNS,
      stored: withOccurrenceKeys(stored, (w) =>
        w.engagement_ref === null || w.delivery_ref === null
          ? `#${w.id}`
          : submissionKey({
              engagement: w.engagement_ref,
              delivery: w.delivery_ref,
              created_at: w.created_at,
              title: w.title,
            }),
      ).map(([w, key]) => ({ id: w.id, key, values: w })),
      wanted,
      stands: (s) => (s.values.reviewed_at ? [...SENT_FIELDS, ...REVIEW_COLUMNS] : SENT_FIELDS),
      keptReason: (s) =>
        s.values.reviewed_at ? 'what was sent, and the review made, stand' : 'what was sent stands',
      children: (s, w) => {
        const have = storedFiles.get(s.id) ?? [];
        const want = (this.wantedFiles.get(w.key) ?? []).map(
          (f) => `${this.files.of(f.rel).sha256}:${f.label}`,
        );
        return have.length === want.length && zip(have, want).every(([a, b]) => a === b) ? [] : ['files'];
      },
    });
    // never removed by a sync: what came back on a turnover is the production's record
    this.submissions.removed = [];
  }

  /** After the engagements, deliveries and packages are written. */
  async write(ctx: SyncContext): Promise<void> {
    await this.submissions.write(ctx);
    const pid = idOf(ctx.productionId);
    const media: NewMedia[] = [];
    for (const c of this.submissions.creates) {
      const workItemId = idOf(c.pending);
      this.createdIds.push(['submission', workItemId]);
      const engagement = c.row.engagement_id;
      const owner = {
        deliveryId: idOf(c.row.delivery_id),
        workItemId,
        uploaderEngagementId: engagement ? idOf(engagement) : null,
      };
      for (const f of this.wantedFiles.get(c.key) ?? []) {
        media.push({
          productionId: pid,
          object: await this.files.stage(pid, f.rel),
          label: f.label,
          owner,
          createdBy: (c.row.created_by as string | null) ?? null,
          at: String(c.row.created_at),
        });
      }
    }
    for (const id of await insertMedia(ctx.db, media)) this.createdIds.push(['media', id]);
  }

  /** The submissions and files this sync created (the plan knows them by key only). */
  logCreated(log: ChangeLog): void {
    for (const [kind, id] of this.createdIds) log.created(kind, id);
  }
}

const readStored = (ctx: SyncContext, pid: number) =>
  ctx.db
    .selectFrom('work_items as w')
    .leftJoin('engagements as e', 'e.id', 'w.engagement_id')
    .innerJoin('deliveries as d', 'd.id', 'w.delivery_id')
    .where('w.production_id', '=', pid)
    .select([
      'w.id',
      'w.title',
      'w.created_at',
      'w.note',
      'w.created_by',
      'w.status',
      'w.review_note',
      'w.reviewed_by',
      'w.reviewed_by_person_id',
      'w.reviewed_at',
      'e.ref as engagement_ref',
      'd.ref as delivery_ref',
    ])
    .orderBy('w.id')
    .execute();

/** Each stored submission's files, as `<sha256>:<label>` in the order they arrived. */
async function readStoredFiles(ctx: SyncContext, pid: number): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const m of await ctx.db
    .selectFrom('media')
    .where('production_id', '=', pid)
    .where('work_item_id', 'is not', null)
    .select(['work_item_id', 'sha256', 'label'])
    .orderBy('id')
    .execute()) {
    const id = m.work_item_id as number;
    const list = out.get(id) ?? [];
    list.push(`${m.sha256}:${m.label}`);
    out.set(id, list);
  }
  return out;
}
