import { compiledOnce } from './driver/compiled.js';
import type { Db } from './index.js';
import { nowIso } from './values.js';
import { chunks } from '../util/chunks.js';

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

// Every write runs it, so it is compiled once (compiledOnce); the sample values are distinct.
const insertOne = compiledOnce(
  (db: Db, ...v: [number, string, string, string, string, number | null, number | null, number | null]) =>
    db
      .insertInto('activity')
      .values({
        production_id: v[0],
        at: v[1],
        actor: v[2],
        verb: v[3],
        summary: v[4],
        node_id: v[5],
        api_key_id: v[6],
        person_id: v[7],
      })
      .returning('id'),
  [1, 'at', 'actor', 'verb', 'summary', 2, 3, 4],
);

/** Every write appends one of these, inside the write's own transaction (pass the trx as db). */
export async function appendActivity(db: Db, entry: ActivityEntry): Promise<number> {
  const r = rowOf(entry);
  const [row] = await insertOne(
    db,
    r.production_id,
    r.at,
    r.actor,
    r.verb,
    r.summary,
    r.node_id,
    r.api_key_id,
    r.person_id,
  );
  return row!.id;
}

/** Several entries in as few statements as the parameter limits allow (a storage batch files into many folders). */
export async function appendActivities(db: Db, entries: readonly ActivityEntry[]): Promise<void> {
  for (const part of chunks(entries)) {
    await db.insertInto('activity').values(part.map(rowOf)).execute();
  }
}
