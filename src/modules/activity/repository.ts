import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';

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

/** Every write appends one of these, inside the write's own transaction (pass the trx as db). */
export async function appendActivity(db: Db, entry: ActivityEntry): Promise<void> {
  await db
    .insertInto('activity')
    .values({
      production_id: entry.productionId,
      at: entry.at ?? nowIso(),
      actor: entry.actor,
      verb: entry.verb,
      summary: entry.summary,
      node_id: entry.nodeId ?? null,
      api_key_id: entry.apiKeyId ?? null,
      person_id: entry.personId ?? null,
    })
    .execute();
}
