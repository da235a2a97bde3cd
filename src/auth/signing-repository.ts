import { randomBytes } from 'node:crypto';
import { dbClock } from '../db/clock.js';
import type { Db } from '../db/index.js';

/** A new secret: 32 random bytes, as text. */
const drawSecret = () => randomBytes(32).toString('base64url');

/**
 * The secrets that verify now, newest first: the one that signs and those retired less than
 * `keepMs` ago (on the database's clock).
 */
export function liveSecrets(db: Db, keepMs: number) {
  return db
    .selectFrom('signing_secrets')
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', dbClock(db, -keepMs))]))
    .select(['generation', 'secret', 'created_at', 'retired_at'])
    .orderBy('generation', 'desc')
    .execute();
}
export type SecretRow = Awaited<ReturnType<typeof liveSecrets>>[number];

/**
 * The first secret, made unless one exists. Servers starting together on an empty table race
 * here: the generation is the key, so one insert wins and every server reads the same row.
 */
export async function ensureSecret(db: Db): Promise<void> {
  const any = await db.selectFrom('signing_secrets').select('generation').limit(1).executeTakeFirst();
  if (any) return;
  await db
    .insertInto('signing_secrets')
    .values({ generation: 1, secret: drawSecret(), created_at: dbClock(db) })
    .onConflict((oc) => oc.column('generation').doNothing())
    .execute();
}

/**
 * A rotation: a new generation signs from now on, the one it replaces is retired (it verifies
 * for `keepMs` more), and secrets retired longer ago than that are deleted. Answers the new
 * generation. `record` runs last in the rotation's transaction (its audit rows).
 */
export async function rotateSecret(
  db: Db,
  keepMs: number,
  record?: (trx: Db, generation: number) => Promise<void>,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const newest = await trx
      .selectFrom('signing_secrets')
      .select((eb) => eb.fn.max('generation').as('g'))
      .executeTakeFirst();
    const generation = Number(newest?.g ?? 0) + 1;
    await trx
      .updateTable('signing_secrets')
      .set({ retired_at: dbClock(trx) })
      .where('retired_at', 'is', null)
      .execute();
    await trx.deleteFrom('signing_secrets').where('retired_at', '<', dbClock(trx, -keepMs)).execute();
    // a rotation through another process at the same moment takes the same number: one fails whole
    await trx
      .insertInto('signing_secrets')
      .values({ generation, secret: drawSecret(), created_at: dbClock(trx) })
      .execute();
    await record?.(trx, generation);
    return generation;
  });
}
