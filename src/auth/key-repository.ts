import { PostgresAdapter, sql } from 'kysely';
import { compiledOnce } from '../db/driver/compiled.js';
import { dbClock } from '../db/clock.js';
import type { Db } from '../db/index.js';

/**
 * The key rows with their production's current revision (read in the same statement, see
 * Principal.revision). Every authenticated request runs one of the lookups below, so they are
 * compiled once (compiledOnce).
 */
const keyRows = (db: Db) =>
  db
    .selectFrom('api_keys')
    .innerJoin('productions', 'productions.id', 'api_keys.production_id')
    .leftJoin('people', 'people.id', 'api_keys.person_id')
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
      // the database's clock, read with the key: what its expiry (and its grants') is judged by
      dbClock(db).as('db_now'),
    ]);

const keyByPrefix = compiledOnce(
  (db: Db, prefix: string) => keyRows(db).where('api_keys.prefix', '=', prefix),
  [''],
);

const keysByPrefixes = compiledOnce(
  (db: Db, prefixes: readonly string[]) =>
    keyRows(db)
      .select('api_keys.prefix')
      .where('api_keys.prefix', '=', sql<string>`any(${prefixes})`),
  [[] as readonly string[]],
);

type KeyRow = Awaited<ReturnType<typeof keyByPrefix>>[number];

/** PostgreSQL: the lookups asked for in this turn of the event loop, by prefix. */
interface Batch {
  waiting: Map<string, Array<{ resolve: (row: KeyRow | undefined) => void; reject: (err: unknown) => void }>>;
}
const batches = new WeakMap<Db, Batch>();

/**
 * On PostgreSQL the lookups of every request that arrived in one turn of the event loop are one
 * statement (`prefix = any($1)`), one round trip and one pooled connection for all of them: a
 * statement each kept the pool busy with fifty copies of the same point lookup under load, and
 * reads ran at about half of SQLite's. Each lookup is still a statement sent after its request
 * arrived, so a key revoked by any process is refused on the very next request as before.
 * SQLite answers in process, at once.
 */
export async function findKeyByPrefix(db: Db, prefix: string): Promise<KeyRow | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    const [row] = await keyByPrefix(db, prefix);
    return row;
  }
  let batch = batches.get(db);
  if (!batch) {
    const fresh: Batch = { waiting: new Map() };
    batches.set(db, (batch = fresh));
    setImmediate(() => {
      batches.delete(db);
      void lookUp(db, fresh);
    });
  }
  const waiting = batch.waiting;
  return new Promise((resolve, reject) => {
    const list = waiting.get(prefix);
    if (list) list.push({ resolve, reject });
    else waiting.set(prefix, [{ resolve, reject }]);
  });
}

async function lookUp(db: Db, batch: Batch): Promise<void> {
  try {
    const rows = await keysByPrefixes(db, [...batch.waiting.keys()]);
    const byPrefix = new Map(rows.map(({ prefix, ...row }) => [prefix, row]));
    for (const [prefix, list] of batch.waiting) for (const w of list) w.resolve(byPrefix.get(prefix));
  } catch (err) {
    for (const list of batch.waiting.values()) for (const w of list) w.reject(err);
  }
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
