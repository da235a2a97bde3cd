import { readdir } from 'node:fs/promises';
import { sql } from 'kysely';
import type { TestEnv } from '../env.js';

/** What a refused request must leave as it was: the rows of every table, and the media files. */
export interface Snapshot {
  rows: Record<string, number>;
  files: string[];
}

async function tablesOf(env: TestEnv): Promise<string[]> {
  const db = env.handle.db;
  const rows =
    env.dialect === 'postgres'
      ? await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
      : await sql<{ name: string }>`select name from sqlite_master
          where type = 'table' and name not like 'sqlite_%'`.execute(db);
  return rows.rows.map((r) => r.name).sort();
}

async function files(root: string): Promise<string[]> {
  try {
    const entries = await readdir(root, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => `${e.parentPath}/${e.name}`.slice(root.length))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * Rows a refusal may add: the audit trail records every download an engagement-bound key asks
 * for and every route a known key is turned away from with 403 (what a content-security review
 * asks about), so only its other rows, the admin actions, are counted.
 */
const WHERE: Record<string, string> = {
  audit_events: ` where action not in ('media.download', 'package.download', 'access.refused')`,
};

/** One query counts every table (so a snapshot costs the same whatever the schema holds). */
export async function snapshotter(env: TestEnv): Promise<() => Promise<Snapshot>> {
  const tables = await tablesOf(env);
  const counts = sql.raw(
    `select ${tables.map((t) => `(select count(*) from "${t}"${WHERE[t] ?? ''}) as "${t}"`).join(', ')}`,
  );
  return async () => {
    const row = (await counts.execute(env.handle.db)).rows[0] as Record<string, number | string>;
    return {
      rows: Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])),
      files: await files(env.config.mediaDir),
    };
  };
}
