import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/index.js';
import { SCOPES } from '../../domain/vocabulary.js';
import { errors } from '../../errors.js';
import { findCallerKey } from './repository.js';
import type { CallerKey } from './schemas.js';

/** Who the caller is, so a tool (the console) offers what the key allows. One query. */
export async function callerKey(db: Db, principal: Principal): Promise<CallerKey> {
  const row = await findCallerKey(db, principal.keyId);
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
