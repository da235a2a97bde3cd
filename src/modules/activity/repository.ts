import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';
import { chunks } from '../../util/chunks.js';

export interface ActivityEntry {
  productionId: number;
  actor: string;
  verb: string;
  summary: string;
  nodeId?: number | null;
  apiKeyId?: number | null;
  personId?: number | null;
  at?: string;
}

const rowOf = (entry: ActivityEntry) => ({
  production_id: entry.productionId,
  at: entry.at ?? nowIso(),
  actor: entry.actor,
  verb: entry.verb,
  summary: entry.summary,
  node_id: entry.nodeId ?? null,
  api_key_id: entry.apiKeyId ?? null,
  person_id: entry.personId ?? null,
});

/** Every write appends one of these, inside the write's own transaction (pass the trx as db). */
export async function appendActivity(db: Db, entry: ActivityEntry): Promise<number> {
  const row = await db.insertInto('activity').values(rowOf(entry)).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Several entries in as few statements as the parameter limits allow (a storage batch files into many folders). */
export async function appendActivities(db: Db, entries: readonly ActivityEntry[]): Promise<void> {
  for (const part of chunks(entries)) {
    await db.insertInto('activity').values(part.map(rowOf)).execute();
  }
}
