import { compiledOnce } from '../db/compiled.js';
import type { Db } from '../db/index.js';

/**
 * The key a token's prefix names, with its production's current revision (read in the same
 * statement, see Principal.revision). Every authenticated request runs it, so it is compiled
 * once (src/db/compiled.ts).
 */
const keyByPrefix = compiledOnce(
  (db: Db, prefix: string) =>
    db
      .selectFrom('api_keys')
      .innerJoin('productions', 'productions.id', 'api_keys.production_id')
      .leftJoin('people', 'people.id', 'api_keys.person_id')
      .where('api_keys.prefix', '=', prefix)
      .select([
        'productions.revision',
        'api_keys.id',
        'api_keys.production_id',
        'api_keys.hash',
        'api_keys.label',
        'api_keys.scopes',
        'api_keys.engagement_id',
        'api_keys.person_id',
        'api_keys.revoked_at',
        'api_keys.expires_at',
        'people.name as person_name',
      ]),
  [''],
);

export async function findKeyByPrefix(db: Db, prefix: string) {
  const [row] = await keyByPrefix(db, prefix);
  return row;
}

export function listKeys(db: Db, productionId: number) {
  return (
    db
      .selectFrom('api_keys')
      .leftJoin('engagements', 'engagements.id', 'api_keys.engagement_id')
      .leftJoin('people', 'people.id', 'api_keys.person_id')
      .where('api_keys.production_id', '=', productionId)
      // a console session's own key is listed and ended with its session, not as a key
      .where((eb) =>
        eb.not(
          eb.exists(
            eb.selectFrom('console_sessions as cs').whereRef('cs.key_id', '=', 'api_keys.id').select('cs.id'),
          ),
        ),
      )
      .select([
        'api_keys.id',
        'api_keys.prefix',
        'api_keys.label',
        'api_keys.scopes',
        'api_keys.created_at',
        'api_keys.last_used_at',
        'api_keys.revoked_at',
        'api_keys.expires_at',
        'engagements.ref as engagement',
        'people.ref as person',
      ])
      .orderBy('api_keys.id')
      .execute()
  );
}

export async function insertKey(
  db: Db,
  row: {
    production_id: number;
    prefix: string;
    hash: string;
    label: string;
    scopes: string;
    engagement_id: number | null;
    person_id: number | null;
    created_at: string;
    expires_at: string | null;
  },
): Promise<number> {
  const out = await db.insertInto('api_keys').values(row).returning('id').executeTakeFirstOrThrow();
  return out.id;
}

export async function revokeKey(db: Db, keyId: number, at: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function touchKeys(db: Db, ids: number[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', 'in', ids).execute();
}

/** Prefixes of every key not revoked (legacy tokens are looked up only under one of these). */
export async function livePrefixes(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('api_keys').where('revoked_at', 'is', null).select('prefix').execute();
  return rows.map((r) => r.prefix);
}
