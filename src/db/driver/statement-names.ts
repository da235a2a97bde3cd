import { LRUCache } from 'lru-cache';

/** SQL text → the name of its prepared statement on every PostgreSQL connection. */
const names = new Map<string, string>();

/**
 * At most this many statements are named because they repeat (those marked by
 * prepareOnPostgres come on top): every connection keeps each one it has run for its life,
 * so the plans a PostgreSQL backend holds stay bounded whatever the SQL texts a process sees.
 */
export const MAX_REPEATED = 400;
/** A text this long (a many-row VALUES list) is not worth a plan kept on every connection. */
const MAX_TEXT = 8_000;
/** How many times a text must have been run before it is named (a one-off is parsed once, as before). */
const REPEATS = 2;

/**
 * Texts never named: planned afresh on every run. PostgreSQL keeps one generic plan for a named
 * statement, costed from the table's statistics when it was made; for a lookup in a table a
 * batch load grows from hundreds of rows to millions in minutes (the storage library on a
 * first scan), that plan stays a sequential scan until autovacuum analyses the table, while a
 * plan made on each run sees the table's current size and takes the index.
 */
const plannedEachRun = new Set<string>();

/** SQL text → times run unnamed, for the texts seen lately (bounded). */
const seen = new LRUCache<string, number>({ max: 5_000 });
let repeated = 0;

/**
 * Marks a statement that runs on most requests to be prepared once per PostgreSQL connection
 * and executed by name from then on: PostgreSQL then skips parsing and planning it on every
 * run (for the key lookup, a three-table join, that was most of its time in the server). Only
 * for a bounded set of fixed SQL texts (compiledOnce, the bulk shapes): every connection keeps
 * each one for its life. Our PostgreSQL driver (postgresDialect) runs a named text by its name.
 */
export function prepareOnPostgres(sql: string): void {
  if (!names.has(sql)) names.set(sql, `prodgraph_${names.size + 1}`);
}

/** Marks a statement to run unnamed, planned for the table as it is at each run. */
export function planEachRun(sql: string): void {
  plannedEachRun.add(sql);
}

/**
 * The name to run `text` under, or undefined to run it unnamed. Besides the marked statements,
 * a text with parameters that has run REPEATS times is named from then on, up to MAX_REPEATED
 * texts: the statements of writes and reads built by Kysely per call (a note's six, a route's
 * few) are the same texts every time, and were each parsed and planned on every run. A text
 * without parameters runs unnamed (the simple protocol, which also takes `release …; savepoint
 * …` in one round trip).
 */
export function statementName(text: string, values: unknown): string | undefined {
  const known = names.get(text);
  if (known !== undefined || repeated >= MAX_REPEATED) return known;
  if (!Array.isArray(values) || values.length === 0 || text.length > MAX_TEXT) return undefined;
  if (plannedEachRun.has(text)) return undefined;
  const runs = (seen.get(text) ?? 0) + 1;
  if (runs < REPEATS) {
    seen.set(text, runs);
    return undefined;
  }
  seen.delete(text);
  repeated++;
  prepareOnPostgres(text);
  return names.get(text);
}
