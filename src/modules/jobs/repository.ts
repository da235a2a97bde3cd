import type { Db } from '../../db/index.js';
import { keysetPage } from '../../db/keyset.js';
import type { PageWindow } from '../../domain/page.js';

/** A page of the production's generation jobs, newest first, each with its media's storage key. */
export function listJobs(db: Db, productionId: number, window: PageWindow, before: string | undefined) {
  let q = db
    .selectFrom('generation_jobs as j')
    .leftJoin('media as m', 'm.id', 'j.media_id')
    .where('j.production_id', '=', productionId)
    .select([
      'j.id',
      'j.kind',
      'j.model',
      'j.prompt',
      'j.status',
      'j.created_at',
      'j.finished_at',
      'j.updated_at',
      'j.media_id',
      'm.storage_key',
    ]);
  if (window.since !== undefined) q = q.where('j.updated_at', '>', window.since);
  if (before !== undefined) q = q.where('j.created_at', '<', before);
  q = keysetPage(q, ['j.created_at', 'j.id'], 'desc', window);
  return q.orderBy('j.created_at', 'desc').orderBy('j.id', 'desc').execute();
}
