import type { Db } from '../../db/index.js';

/** The key with its production, and its engagement and organisation when it is bound to one. */
export function findCallerKey(db: Db, keyId: number) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('productions as p', 'p.id', 'k.production_id')
    .leftJoin('engagements as e', 'e.id', 'k.engagement_id')
    .leftJoin('organisations as o', 'o.id', 'e.organisation_id')
    .where('k.id', '=', keyId)
    .select(['k.id', 'k.prefix', 'k.label', 'p.code', 'p.title', 'e.id as engagement_id', 'e.ref', 'o.name'])
    .executeTakeFirst();
}
