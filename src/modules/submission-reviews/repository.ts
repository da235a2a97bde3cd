import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { ReviewDecision } from '../../domain/vocabulary.js';
import { SUBMISSION_COLUMNS } from '../turnovers/repository.js';

/** A submission on a live delivery, with what its review needs: its delivery and engagement. */
export function submissionToReview(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('work_items as w')
    .innerJoin('deliveries as d', 'd.id', 'w.delivery_id')
    .leftJoin('engagements as e', 'e.id', 'w.engagement_id')
    .leftJoin('organisations as o', 'o.id', 'e.organisation_id')
    .where('w.production_id', '=', productionId)
    .where('w.id', '=', id)
    .where('d.retired_at', 'is', null)
    .select([
      'w.id',
      'w.title',
      'd.id as delivery_id',
      'd.title as delivery_title',
      'd.status as delivery_status',
      'w.engagement_id',
      'e.ref as engagement_ref',
      'o.name as organisation_name',
    ])
    .executeTakeFirst();
}

/** One submission as the submission list reads it (its delivery's retirement aside). */
export function submissionRow(db: Db, productionId: number, id: number) {
  return db
    .selectFrom('work_items as w')
    .where('w.production_id', '=', productionId)
    .where('w.id', '=', id)
    .select(SUBMISSION_COLUMNS)
    .executeTakeFirst();
}

/** People of the production whose id is `named` (digits) or whose name it is, any case. */
export function peopleNamed(db: Db, productionId: number, named: string) {
  const id = /^\d{1,9}$/.test(named) ? Number(named) : -1;
  return db
    .selectFrom('people')
    .where('production_id', '=', productionId)
    .where((eb) => eb.or([eb('id', '=', id), sql<boolean>`lower(name) = lower(${named.trim()})`]))
    .select(['id', 'name'])
    .orderBy('id')
    .limit(10)
    .execute();
}

export async function recordReview(
  db: Db,
  productionId: number,
  id: number,
  review: {
    decision: ReviewDecision;
    note: string;
    reviewedBy: string;
    reviewerPersonId: number | null;
    at: string;
  },
): Promise<void> {
  await db
    .updateTable('work_items')
    .set({
      status: review.decision,
      review_note: review.note,
      reviewed_by: review.reviewedBy,
      reviewed_by_person_id: review.reviewerPersonId,
      reviewed_at: review.at,
    })
    .where('production_id', '=', productionId)
    .where('id', '=', id)
    .execute();
}
