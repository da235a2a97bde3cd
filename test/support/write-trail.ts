import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestEnv } from './env.js';

/*
 * What a write leaves behind, to assert that one was recorded (its change rows, its activity
 * entry) and that a refused one left nothing (no row, no change, no stored or staged file).
 */

/** The database's position now: every later change and activity row is the write's. */
export async function mark(env: TestEnv) {
  const db = env.handle.db;
  const max = async (table: 'changes' | 'activity' | 'media' | 'organisations' | 'work_items') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.max('id').as('m'))
          .executeTakeFirst()
      )?.m ?? 0,
    );
  return {
    changes: await max('changes'),
    activity: await max('activity'),
    media: await max('media'),
    organisations: await max('organisations'),
    files: await storedFiles(env),
  };
}
export type Mark = Awaited<ReturnType<typeof mark>>;

/** The changes logged since `m`, as `kind:id:op`, sorted. */
export async function changesSince(env: TestEnv, m: Mark): Promise<string[]> {
  const rows = await env.handle.db
    .selectFrom('changes')
    .where('id', '>', m.changes)
    .select(['kind', 'object_id', 'op'])
    .execute();
  return rows.map((c) => `${c.kind}:${c.object_id}:${c.op}`).sort();
}

/** The activity entries appended since `m`, as `verb: summary`, in order. */
export async function activitySince(env: TestEnv, m: Mark): Promise<string[]> {
  const rows = await env.handle.db
    .selectFrom('activity')
    .where('id', '>', m.activity)
    .select(['verb', 'summary', 'actor'])
    .orderBy('id')
    .execute();
  return rows.map((a) => `${a.verb}: ${a.summary}`);
}

/** Every file under the media folder (staged ones included), as relative paths. */
export async function storedFiles(env: TestEnv): Promise<string[]> {
  try {
    const entries = await readdir(env.config.mediaDir, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .sort();
  } catch {
    return [];
  }
}

/** Whether nothing was written since `m`: no change, no activity, no media row, no file. */
export async function nothingSince(env: TestEnv, m: Mark): Promise<boolean> {
  const now = await mark(env);
  return (
    now.changes === m.changes &&
    now.activity === m.activity &&
    now.media === m.media &&
    now.organisations === m.organisations &&
    now.files.join('\n') === m.files.join('\n')
  );
}

/** PRODGRAPH_DB and PRODGRAPH_MEDIA for the CLI on the env's own database. */
export function cliEnvOf(env: TestEnv): Record<string, string> {
  const db = env.config.db;
  if (db.dialect === 'sqlite')
    return { PRODGRAPH_DB: `sqlite:${db.path}`, PRODGRAPH_MEDIA: env.config.mediaDir };
  const sep = db.url.includes('?') ? '&' : '?';
  return {
    PRODGRAPH_DB: `${db.url}${sep}options=${encodeURIComponent(`-c search_path=${env.schema}`)}`,
    PRODGRAPH_MEDIA: env.config.mediaDir,
  };
}
