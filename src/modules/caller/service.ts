import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/index.js';
import { SCOPES } from '../../domain/vocabulary.js';
import { errors } from '../../errors.js';
import type { CallerKey } from './schemas.js';

/** Who the caller is, so a tool (the console) offers what the key allows. One query. */
export async function callerKey(db: Db, principal: Principal): Promise<CallerKey> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('productions as p', 'p.id', 'k.production_id')
    .leftJoin('engagements as e', 'e.id', 'k.engagement_id')
    .leftJoin('organisations as o', 'o.id', 'e.organisation_id')
    .where('k.id', '=', principal.keyId)
    .select(['k.id', 'k.prefix', 'k.label', 'p.code', 'p.title', 'e.id as engagement_id', 'e.ref', 'o.name'])
    .executeTakeFirst();
  // the key was authenticated a moment ago; gone now means revoked meanwhile
  if (!row) throw errors.unauthorized('unknown or revoked API key');
  return {
    id: row.id,
    prefix: row.prefix,
    label: row.label,
    scopes: SCOPES.filter((s) => principal.scopes.has(s)),
    production: { code: row.code, title: row.title },
    engagement:
      row.engagement_id === null
        ? null
        : { id: row.engagement_id, ref: row.ref, organisation: row.name ?? '' },
    person_name: principal.personName,
  };
}
