import { sql } from 'kysely';
import type { Db } from '../../db/index.js';

/** The cheapest statement there is: it throws when the database does not answer. */
export async function databaseAnswers(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
